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
      logFormat: undefined,
      corsOrigins: [],
      trustedProxies: [],
      databasePoolSize: 7,
      databaseConnectTimeoutMs: 3000,
      databaseStatementTimeoutMs: 5000,
      migrationsAtStart: true,
      migrationLockTimeoutMs: 5000,
      shutdownDelayMs: 0,
      redisCommandTimeoutMs: 100,
      webhookAllowedHosts: [],
      webhookTimeoutMs: 5000,
      webhookRetryBaseMs: 10000,
      webhookMaxAttempts: 10,
      webhookPollIntervalMs: 1000,
      webhookListen: true,
      webhookSendTraceContext: true,
      webhookMaxInFlightPerSubscription: 16,
      webhookDisableAfterFailingMs: 432_000_000,
      webhookSecretKeys: [],
      webhookDeliveryRetentionMs: 30 * 86_400_000,
      retentionSweepIntervalMs: 3_600_000,
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
      LOG_FORMAT: 'json',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,',
      TRUST_PROXY: '10.0.0.0/8,127.0.0.1,fd00::/8',
      DATABASE_POOL_SIZE: '20',
      DATABASE_CONNECT_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '30000',
      MIGRATIONS_AT_START: 'false',
      MIGRATION_LOCK_TIMEOUT_MS: '2000',
      SHUTDOWN_DELAY_MS: '5000',
      REDIS_COMMAND_TIMEOUT_MS: '250',
      WEBHOOK_ALLOWED_HOSTS: 'localhost, 127.0.0.1,::1,hooks.internal',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      WEBHOOK_LISTEN: 'false',
      WEBHOOK_SEND_TRACE_CONTEXT: 'false',
      WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: '2',
      WEBHOOK_DISABLE_AFTER_FAILING_MS: '0',
      WEBHOOK_SECRET_KEYS: `2026-11:${'A'.repeat(43)}=, 2026-05:${'B'.repeat(43)}=`,
      WEBHOOK_DELIVERY_RETENTION: '12h',
      RETENTION_SWEEP_INTERVAL_MS: '60000',
    });
    expect({ ...config }).toEqual({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'postgres://u:p@db:5432/plants',
      databaseDirectUrl: undefined,
      dataDir: '/var/lib/plant-store',
      logLevel: 'debug',
      rateLimitPerMinute: 0,
      logFormat: 'json',
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      trustedProxies: ['10.0.0.0/8', '127.0.0.1', 'fd00::/8'],
      databasePoolSize: 20,
      databaseConnectTimeoutMs: 1500,
      databaseStatementTimeoutMs: 30000,
      migrationsAtStart: false,
      migrationLockTimeoutMs: 2000,
      shutdownDelayMs: 5000,
      redisCommandTimeoutMs: 250,
      webhookAllowedHosts: ['localhost', '127.0.0.1', '::1', 'hooks.internal'],
      webhookTimeoutMs: 2000,
      webhookRetryBaseMs: 50,
      webhookMaxAttempts: 3,
      webhookPollIntervalMs: 20,
      webhookListen: false,
      webhookSendTraceContext: false,
      webhookMaxInFlightPerSubscription: 2,
      webhookDisableAfterFailingMs: 0,
      webhookSecretKeys: [
        { id: '2026-11', key: Buffer.from(`${'A'.repeat(43)}=`, 'base64') },
        { id: '2026-05', key: Buffer.from(`${'B'.repeat(43)}=`, 'base64') },
      ],
      webhookDeliveryRetentionMs: 43_200_000,
      retentionSweepIntervalMs: 60_000,
    });
  });

  it.each([
    ['30d', 2_592_000_000],
    ['12h', 43_200_000],
    ['10m', 600_000],
    ['90s', 90_000],
    ['forever', null],
  ])('takes WEBHOOK_DELIVERY_RETENTION=%s', (retention, ms) => {
    expect(
      AppConfig.fromEnvironment({ WEBHOOK_DELIVERY_RETENTION: retention })
        .webhookDeliveryRetentionMs,
    ).toBe(ms);
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")'],
    [
      { DATABASE_DIRECT_URL: 'postgres://u:p@db:5432/plants' },
      'Invalid configuration: DATABASE_DIRECT_URL goes with a DATABASE_URL through a pooler; set DATABASE_URL too',
    ],
    [
      { WEBHOOK_ALLOWED_HOSTS: 'http://hooks.internal' },
      'Invalid configuration: WEBHOOK_ALLOWED_HOSTS must be a comma-separated list of host names or IP addresses, like hooks.internal,10.0.0.7 (got "http://hooks.internal")',
    ],
    ...[
      'k1:c2hvcnQ=',
      `k1:${'A'.repeat(43)}=,k1:${'B'.repeat(43)}=`,
      `${'A'.repeat(43)}=`,
      `k:1:${'A'.repeat(43)}=`,
    ].map((keys) => [
      { WEBHOOK_SECRET_KEYS: keys },
      'Invalid configuration: WEBHOOK_SECRET_KEYS must be a comma-separated list of id:key, each id letters, digits, _ or - (at most 32) and each key 32 random bytes in base64 (openssl rand -base64 32), the ids all different (its value not shown)',
    ]),
    [
      { SHUTDOWN_DELAY_MS: '15001' },
      'Invalid configuration: SHUTDOWN_DELAY_MS must be an integer from 0 to 15000 (got "15001")',
    ],
    [
      { MIGRATIONS_AT_START: 'no' },
      'Invalid configuration: MIGRATIONS_AT_START must be true or false (got "no")',
    ],
    [
      { WEBHOOK_LISTEN: 'yes' },
      'Invalid configuration: WEBHOOK_LISTEN must be true or false (got "yes")',
    ],
    [
      { WEBHOOK_SEND_TRACE_CONTEXT: '0' },
      'Invalid configuration: WEBHOOK_SEND_TRACE_CONTEXT must be true or false (got "0")',
    ],
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
    [
      { LOG_FORMAT: 'yaml' },
      'Invalid configuration: LOG_FORMAT must be one of json, pretty, or unset (got "yaml")',
    ],
    ...['*', 'https://app.example.com/', 'https://app.example.com/path', 'app.example.com'].map(
      (origin) => [
        { CORS_ORIGINS: `https://ok.example.com,${origin}` },
        `Invalid configuration: CORS_ORIGINS must be a comma-separated list of exact origins like https://app.example.com (scheme, host and port; no path, no *) (got "https://ok.example.com,${origin}")`,
      ],
    ),
    ...[
      'true',
      '1',
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0.0/8/8',
      'proxy.internal',
      '10.0.0.0/x',
    ].map((range) => [
      { TRUST_PROXY: range },
      `Invalid configuration: TRUST_PROXY must be a comma-separated list of proxy addresses or CIDR ranges, like 10.0.0.0/8,127.0.0.1 (got "${range}")`,
    ]),
    ...['3', '101', 'many', '7.5'].map((size) => [
      { DATABASE_POOL_SIZE: size },
      `Invalid configuration: DATABASE_POOL_SIZE must be an integer from 4 to 100 (got "${size}")`,
    ]),
    ...['99', '60001', '-1'].map((ms) => [
      { DATABASE_CONNECT_TIMEOUT_MS: ms },
      `Invalid configuration: DATABASE_CONNECT_TIMEOUT_MS must be an integer from 100 to 60000 (got "${ms}")`,
    ]),
    ...['0', '300001', '5s'].map((ms) => [
      { DATABASE_STATEMENT_TIMEOUT_MS: ms },
      `Invalid configuration: DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 100 to 300000 (got "${ms}")`,
    ]),
    ...['99', '60001', '5s'].map((ms) => [
      { MIGRATION_LOCK_TIMEOUT_MS: ms },
      `Invalid configuration: MIGRATION_LOCK_TIMEOUT_MS must be an integer from 100 to 60000 (got "${ms}")`,
    ]),
    ...['9', '5001', '0.1s'].map((ms) => [
      { REDIS_COMMAND_TIMEOUT_MS: ms },
      `Invalid configuration: REDIS_COMMAND_TIMEOUT_MS must be an integer from 10 to 5000 (got "${ms}")`,
    ]),
    ...['0', '129'].map((count) => [
      { WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: count },
      `Invalid configuration: WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION must be an integer from 1 to 128 (got "${count}")`,
    ]),
    ...['-1', '2592000001', '5d'].map((ms) => [
      { WEBHOOK_DISABLE_AFTER_FAILING_MS: ms },
      `Invalid configuration: WEBHOOK_DISABLE_AFTER_FAILING_MS must be an integer from 0 to 2592000000 (got "${ms}")`,
    ]),
    ...['30', '0d', '-1d', '1.5d', '30 days', '30D', '1w', 'Forever', 'never', '1000000d'].map(
      (retention) => [
        { WEBHOOK_DELIVERY_RETENTION: retention },
        `Invalid configuration: WEBHOOK_DELIVERY_RETENTION must be a duration like 30d, 12h or 10m (a whole number and s, m, h or d), or forever (got "${retention}")`,
      ],
    ),
    ...['999', '86400001', '1h', '-1'].map((ms) => [
      { RETENTION_SWEEP_INTERVAL_MS: ms },
      `Invalid configuration: RETENTION_SWEEP_INTERVAL_MS must be an integer from 1000 to 86400000 (got "${ms}")`,
    ]),
  ] as Array<[Record<string, string>, string | RegExp]>)(
    'refuses %j with one line naming the variable',
    (env, message) => {
      expect(() => AppConfig.fromEnvironment(env)).toThrow(ConfigError);
      expect(() => AppConfig.fromEnvironment(env)).toThrow(message);
    },
  );

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
