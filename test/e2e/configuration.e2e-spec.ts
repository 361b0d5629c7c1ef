import { expect, it } from 'vitest';
import { ServiceProcess } from '../support/built-service.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

// What a start refuses, not what the database does: the embedded run covers it.
describeOnEmbeddedRun('configuration checked at start (the built service)', () => {
  it.each([
    ['PORT', 'abc', /PORT must be an integer from 0 to 65535/],
    ['PORT', '70000', /PORT must be an integer from 0 to 65535/],
    [
      'LOG_LEVEL',
      'loud',
      /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/,
    ],
    [
      'RATE_LIMIT_PER_MINUTE',
      '-1',
      /RATE_LIMIT_PER_MINUTE must be a whole number from 0 \(off\) to 1000000/,
    ],
    ['RATE_LIMIT_PER_MINUTE', 'lots', /RATE_LIMIT_PER_MINUTE must be a whole number/],
    ['DATABASE_URL', 'mysql://db/plants', /DATABASE_URL must be a postgres:\/\/ URL/],
    ['LOG_FORMAT', 'yaml', /LOG_FORMAT must be one of json, pretty/],
    ['CORS_ORIGINS', '*', /CORS_ORIGINS must be a comma-separated list of exact origins/],
    ['TRUST_PROXY', 'true', /TRUST_PROXY must be a comma-separated list of proxy addresses/],
    ['DATABASE_POOL_SIZE', '1', /DATABASE_POOL_SIZE must be an integer from 4 to 100/],
    [
      'DATABASE_CONNECT_TIMEOUT_MS',
      '0',
      /DATABASE_CONNECT_TIMEOUT_MS must be an integer from 100 to 60000/,
    ],
    [
      'DATABASE_STATEMENT_TIMEOUT_MS',
      '10m',
      /DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 100 to 300000/,
    ],
    [
      'WEBHOOK_DELIVERY_RETENTION',
      '30 days',
      /WEBHOOK_DELIVERY_RETENTION must be a duration like 30d, 12h or 10m .*, or forever/,
    ],
    [
      'RETENTION_SWEEP_INTERVAL_MS',
      '500',
      /RETENTION_SWEEP_INTERVAL_MS must be an integer from 1000 to 86400000/,
    ],
  ])(
    '%s=%s stops the service with one line naming it, before anything starts',
    async (name, value, reason) => {
      const service = new ServiceProcess({ [name]: value });
      const exit = await service.exited;
      expect(exit.code).toBe(1);
      const { stdout, stderr } = service.output;
      expect(stdout).toBe('');
      expect(stderr.endsWith('\n')).toBe(true);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(reason);
      expect(stderr).toContain(JSON.stringify(value));
    },
  );
});
