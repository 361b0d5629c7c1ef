import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppConfig, ConfigError, redactPassword } from '../../src/config/app-config.js';

describe('AppConfig.fromEnvironment', () => {
  it('has defaults for everything', () => {
    expect({ ...AppConfig.fromEnvironment({}) }).toEqual({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: resolve('./data'),
      logLevel: 'info',
      rateLimitPerMinute: 600,
    });
  });

  it('reads every variable', () => {
    const config = AppConfig.fromEnvironment({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u:p@db:5432/plants',
      DATA_DIR: '/var/lib/plant-store',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    expect({ ...config }).toEqual({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'postgres://u:p@db:5432/plants',
      dataDir: '/var/lib/plant-store',
      logLevel: 'debug',
      rateLimitPerMinute: 0,
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")'],
    [
      { PORT: '70000' },
      'Invalid configuration: PORT must be an integer from 0 to 65535 (got "70000")',
    ],
    [
      { PORT: '3000.5' },
      'Invalid configuration: PORT must be an integer from 0 to 65535 (got "3000.5")',
    ],
    [
      { DATABASE_URL: 'mysql://x' },
      /^Invalid configuration: DATABASE_URL must be a postgres:\/\/ URL/,
    ],
    [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL must be one of fatal, error/],
    [
      { RATE_LIMIT_PER_MINUTE: '-1' },
      'Invalid configuration: RATE_LIMIT_PER_MINUTE must be a whole number from 0 (off) to 1000000 (got "-1")',
    ],
    [
      { RATE_LIMIT_PER_MINUTE: '1000001' },
      'Invalid configuration: RATE_LIMIT_PER_MINUTE must be a whole number from 0 (off) to 1000000 (got "1000001")',
    ],
  ])('refuses %j with one line naming the variable', (env, message) => {
    expect(() => AppConfig.fromEnvironment(env)).toThrow(ConfigError);
    expect(() => AppConfig.fromEnvironment(env)).toThrow(message);
  });

  it.each([
    'mysql://admin:hunter2@db:3306/plants',
    'postgres://admin:hunter 2@db/plants',
    'postgres//admin:hunter2@db/plants',
    'admin:hunter2@db/plants',
  ])('never echoes the password of a rejected DATABASE_URL (%s)', (url) => {
    expect(() => AppConfig.fromEnvironment({ DATABASE_URL: url })).toThrow(
      /DATABASE_URL must be a postgres:\/\/ URL.*\(got ".*admin:\*\*\*@db.*"\)$/,
    );
    expect(() => AppConfig.fromEnvironment({ DATABASE_URL: url })).not.toThrow(/hunter/);
  });
});

describe('redactPassword', () => {
  it.each([
    ['postgres://u:secret@host:5432/db', 'postgres://u:***@host:5432/db'],
    ['postgres://u:p@ss/w@rd@host/db', 'postgres://u:***@host/db'],
    ['postgres://:secret@host/db', 'postgres://:***@host/db'],
    ['postgres://u@host/db', 'postgres://u@host/db'],
    ['postgres://host:5432/db', 'postgres://host:5432/db'],
  ])('%s → %s', (value, redacted) => {
    expect(redactPassword(value)).toBe(redacted);
  });
});
