import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSecretsCheck } from '../../src/webhooks/secrets/webhook-secrets.check.js';
import { generateSigningSecret } from '../../src/webhooks/webhook-signature.js';
import {
  issueToken,
  runAuditCli,
  runMigrationCli,
  runWebhookSecretsCli,
  type ServiceProcess,
  startService,
} from '../support/built-service.js';
import pg from 'pg';
import { AUDIT_CHAIN_LOCK_KEY } from '../../src/audit/chain/audit-chain.js';
import { createTestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { TEST_WEBHOOK_SECRET_KEYS } from '../support/webhook-secret-keys.js';

const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

interface Recorded {
  id: string;
  actor: string;
  subject_type: string;
  subject_id: string;
  details: Record<string, unknown>;
}

/**
 * `webhook-secrets re-encrypt` and a change of the configured key ids are audit events
 * (issue 42), chained as every other, and the chain stays whole.
 */
describe('webhook secrets in the audit trail', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  const recorded = (event: string) =>
    database.query<Recorded>(
      `SELECT id::text, actor, subject_type, subject_id, details FROM audit_events
       WHERE event = '${event}' ORDER BY id`,
    );
  const expectWhole = async () => {
    const verified = await runAuditCli(['verify'], { ...database.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^audit trail whole: \d+ row\(s\), ids 1 to \d+, chained/);
  };
  /** `count` replicas started at once with `keys`, then stopped; answers their log lines. */
  const startReplicas = async (count: number, keys: string) => {
    const services: ServiceProcess[] = [];
    try {
      await Promise.all(
        Array.from({ length: count }, async () => {
          const { service } = await startService({
            ...database.env,
            WEBHOOK_SECRET_KEYS: keys,
          });
          services.push(service);
        }),
      );
      return services.flatMap((service) => service.logLines());
    } finally {
      for (const service of services) await service.stop();
    }
  };
  const auditLines = (lines: Array<Record<string, unknown>>, event: string) =>
    lines.filter((line) => line.msg === 'audit event' && line.event === event);

  beforeAll(async () => {
    database = await createTestDatabase();
    const migrated = await runMigrationCli(['run'], { ...database.env });
    expect(migrated.code, migrated.stderr).toBe(0);
  });
  afterAll(() => database?.drop());

  it('records the key ids a start brings, once however many replicas start with them, ids only', async () => {
    const second = key('second');
    // A new database stays empty, for a restore, until something is done to it.
    await startReplicas(1, TEST_WEBHOOK_SECRET_KEYS);
    expect(await database.query('SELECT id FROM audit_events')).toEqual([]);

    await issueToken(database);
    const first = await startReplicas(3, TEST_WEBHOOK_SECRET_KEYS);
    const service = `service:${userInfo().username}`;
    expect(await recorded('webhook_secrets.keys_changed')).toEqual([
      {
        id: expect.any(String),
        actor: service,
        subject_type: 'webhook_secrets',
        subject_id: 'WEBHOOK_SECRET_KEYS',
        details: { previousKeyIds: null, keyIds: ['test'] },
      },
    ]);
    expect(auditLines(first, 'webhook_secrets.keys_changed')).toHaveLength(1);

    const changed = await startReplicas(3, `${second},${TEST_WEBHOOK_SECRET_KEYS}`);
    const rows = await recorded('webhook_secrets.keys_changed');
    expect(rows.map(({ details }) => details)).toEqual([
      { previousKeyIds: null, keyIds: ['test'] },
      { previousKeyIds: ['test'], keyIds: ['second', 'test'] },
    ]);
    expect(rows[1].actor).toBe(service);
    const [line] = auditLines(changed, 'webhook_secrets.keys_changed');
    expect(line).toMatchObject({ auditId: rows[1].id, details: rows[1].details });
    expect(auditLines(changed, 'webhook_secrets.keys_changed')).toHaveLength(1);
    // Never key material: neither key is anywhere in the trail.
    const trail = JSON.stringify(await database.query('SELECT * FROM audit_events'));
    for (const material of [second, TEST_WEBHOOK_SECRET_KEYS].map((each) => each.split(':')[1])) {
      expect(trail).not.toContain(material);
    }

    // The same ids again: nothing.
    await startReplicas(1, `${second},${TEST_WEBHOOK_SECRET_KEYS}`);
    expect(await recorded('webhook_secrets.keys_changed')).toHaveLength(2);
    await expectWhole();
  });

  it('records a change once when starts race: each reads the latest record under the chain lock', async () => {
    const api = await createTestApp();
    try {
      // Started on an empty trail: nothing recorded; a token makes it hold a row.
      await api.issueToken();
      const check = api.app.get(WebhookSecretsCheck);
      // The chain's end held elsewhere until five starts wait for it: all five then go on
      // at once, none having recorded anything yet.
      const holder = new pg.Client({ connectionString: api.database.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_CHAIN_LOCK_KEY]);
        const starts = Promise.all(Array.from({ length: 5 }, () => check.onApplicationBootstrap()));
        await expect
          .poll(
            async () =>
              (
                await api.database.query<{ waiting: number }>(
                  `SELECT count(*)::integer AS waiting FROM pg_locks
                   WHERE locktype = 'advisory' AND NOT granted`,
                )
              )[0].waiting,
            { timeout: 10_000, interval: 20 },
          )
          .toBe(5);
        await holder.query('COMMIT');
        await starts;
      } finally {
        await holder.end();
      }
      expect(
        await api.database.query(
          `SELECT details FROM audit_events WHERE event = 'webhook_secrets.keys_changed'`,
        ),
      ).toEqual([{ details: { previousKeyIds: null, keyIds: ['test'] } }]);
    } finally {
      await api.close();
    }
  });

  it('records re-encrypt in its own transaction: the key, the secrets sealed, the clear ones erased, the constraint', async () => {
    const keys = `${key('third')},${TEST_WEBHOOK_SECRET_KEYS}`;
    // Two subscriptions as release 1.0.0 stores them, their secrets in clear.
    await database.query(`
      INSERT INTO webhook_subscriptions (url, secret) VALUES
        ('http://127.0.0.1:9/a', '${generateSigningSecret()}'),
        ('http://127.0.0.1:9/b', '${generateSigningSecret()}')`);

    const sealedOnce = await runWebhookSecretsCli(['re-encrypt'], {
      ...database.env,
      WEBHOOK_SECRET_KEYS: keys,
    });
    expect(sealedOnce.code, sealedOnce.stderr).toBe(0);
    const [first] = await recorded('webhook_secrets.re_encrypted');
    expect(first).toEqual({
      id: expect.any(String),
      actor: `cli:${userInfo().username}`,
      subject_type: 'webhook_secrets',
      subject_id: 'webhook_subscriptions',
      details: {
        keyId: 'third',
        reEncrypted: 2,
        clearSecretsErased: 2,
        clearSecretsRetired: true,
      },
    });
    // Its line, on standard error in the service's log format, after the commit.
    const line = sealedOnce.stderr
      .split('\n')
      .filter((each) => each.startsWith('{'))
      .map((each) => JSON.parse(each) as Record<string, unknown>)
      .find((each) => each.msg === 'audit event');
    expect(line).toMatchObject({
      event: 'webhook_secrets.re_encrypted',
      auditId: first.id,
      details: first.details,
    });

    const again = await runWebhookSecretsCli(['re-encrypt'], {
      ...database.env,
      WEBHOOK_SECRET_KEYS: keys,
    });
    expect(again.code, again.stderr).toBe(0);
    expect((await recorded('webhook_secrets.re_encrypted')).map(({ details }) => details)).toEqual([
      first.details,
      { keyId: 'third', reEncrypted: 2, clearSecretsErased: 0, clearSecretsRetired: false },
    ]);

    // Refused (the secrets are under "third", which these keys lack): neither the secrets
    // nor the trail change.
    const before = await database.query('SELECT id, secret_encrypted FROM webhook_subscriptions');
    const refused = await runWebhookSecretsCli(['re-encrypt'], {
      ...database.env,
      WEBHOOK_SECRET_KEYS: key('fourth'),
    });
    expect(refused.code).toBe(2);
    expect(await recorded('webhook_secrets.re_encrypted')).toHaveLength(2);
    expect(await database.query('SELECT id, secret_encrypted FROM webhook_subscriptions')).toEqual(
      before,
    );
    await expectWhole();
  });
});
