import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningSecret } from '../../src/webhooks/webhook-signature.js';
import {
  issueToken,
  runMigrationCli,
  runWebhookSecretsCli,
  send,
  ServiceProcess,
  startService,
} from '../support/built-service.js';
import { plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { TEST_WEBHOOK_SECRET_KEYS } from '../support/webhook-secret-keys.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';
import { webhooksClient } from '../support/webhooks-client.js';

const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

/** Every row of every table of the database, as text: what a dump or a `SELECT` shows. */
async function dump(database: TestDatabase): Promise<string> {
  const tables = await database.query<{ name: string }>(
    `SELECT quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  expect(tables.map(({ name }) => name)).toContain('webhook_subscriptions');
  const rows = await Promise.all(
    tables.map(({ name }) =>
      database.query<{ row: string }>(`SELECT t::text AS row FROM ${name} AS t`),
    ),
  );
  return rows
    .flat()
    .map(({ row }) => row)
    .join('\n');
}

/** Neither the secret nor its key bytes (base64, hex) appear anywhere in `text`. */
function expectNoSecret(text: string, secrets: string[]) {
  for (const secret of secrets) {
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('whsec_'.length));
    expect(text).not.toContain(bytes.toString('hex'));
  }
}

describe('webhook signing secrets encrypted at rest', () => {
  describe('what the service stores', () => {
    let api: TestApp;
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      api = await createTestApp({
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        WEBHOOK_POLL_INTERVAL_MS: '20',
      });
      receiver = await WebhookReceiver.start();
    });
    afterAll(async () => {
      await receiver.stop();
      await api.close();
    });

    it('a dump of every table holds no secret, created or rotated, while deliveries are signed with them', async () => {
      const webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
      const created = (await webhooks.subscribe({ url: receiver.url })).json<{
        id: string;
        secret: string;
      }>();
      const other = (await webhooks.subscribe({ url: `${receiver.url}?other` })).json<{
        secret: string;
      }>();
      const rotated = (await webhooks.rotateSecret(created.id, { overlapSeconds: 600 })).json<{
        secret: string;
      }>();
      const secrets = [created.secret, other.secret, rotated.secret];

      const plants = plantsClient(api, await api.issueToken());
      expect((await plants.create({ id: 1, name: 'Sealed' })).statusCode).toBe(200);
      const deliveries = await receiver.waitFor(2);
      const signedFor = (secret: string) =>
        deliveries.filter((delivery) => {
          try {
            verifySignature(secret, delivery);
            return true;
          } catch {
            return false;
          }
        }).length;
      expect(secrets.map(signedFor)).toEqual([1, 1, 1]);

      const stored = await dump(api.database);
      expectNoSecret(stored, secrets);
      const [row] = await api.database.query<{
        secret: string | null;
        secret_encrypted: string;
        previous_secret: string;
      }>(
        `SELECT secret, secret_encrypted, previous_secret FROM webhook_subscriptions WHERE id = '${created.id}'`,
      );
      expect(row).toEqual({
        secret: null,
        secret_encrypted: expect.stringMatching(/^v2:test:[A-Za-z0-9+/]+=*$/),
        previous_secret: expect.stringMatching(/^v2:test:[A-Za-z0-9+/]+=*$/),
      });
    });
  });

  describe('the migration, re-encryption, key rotation and refusals (the built service and CLIs)', () => {
    let database: TestDatabase;
    let receiver: WebhookReceiver;
    const legacySecret = generateSigningSecret();
    const firstKeys = TEST_WEBHOOK_SECRET_KEYS;
    const newKey = key('second');
    const applied = async () =>
      (await database.query<{ name: string }>('SELECT name FROM migrations')).map(
        ({ name }) => name,
      );

    beforeAll(async () => {
      database = await createTestDatabase();
      receiver = await WebhookReceiver.start();
    });
    afterAll(async () => {
      await receiver.stop();
      await database.drop();
    });

    /** Creates a plant through a service started with `keys`, and awaits its delivery. */
    async function deliveredWith(keys: string, id: number) {
      const env = {
        ...database.env,
        WEBHOOK_SECRET_KEYS: keys,
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      };
      const { service, url } = await startService(env);
      try {
        const token = await issueToken(database, `t${id}`);
        const created = await send(`${url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id, name: `plant ${id}` }),
        });
        expect(created.status).toBe(200);
        const deadline = Date.now() + 30_000;
        for (;;) {
          const delivery = receiver.received.find(
            ({ body }) => (JSON.parse(body) as { id: number }).id === id,
          );
          if (delivery) return delivery;
          if (Date.now() > deadline) throw new Error(`plant ${id} was not delivered`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await service.stop();
      }
    }

    it('encrypts a secret the release before stored in clear, keeping the clear copy it still signs with', async () => {
      const migrated = await runMigrationCli(['run'], { ...database.env });
      expect(migrated.code, migrated.stderr).toBe(0);
      // Back to the schema before encryption, where the previous release stores a subscription.
      while ((await applied()).includes('EncryptWebhookSecrets1764300000001')) {
        const reverted = await runMigrationCli(['revert'], { ...database.env });
        expect(reverted.code, reverted.stderr).toBe(0);
      }
      await database.query(
        `INSERT INTO webhook_subscriptions (url, secret) VALUES ('${receiver.url}', '${legacySecret}')`,
      );
      const encrypted = await runMigrationCli(['run'], {
        ...database.env,
        WEBHOOK_SECRET_KEYS: firstKeys,
      });
      expect(encrypted.code, encrypted.stderr).toBe(0);
      const [row] = await database.query<{ secret: string; secret_encrypted: string }>(
        'SELECT secret, secret_encrypted FROM webhook_subscriptions',
      );
      expect(row).toEqual({
        secret: legacySecret,
        secret_encrypted: expect.stringMatching(/^v2:test:/),
      });

      verifySignature(legacySecret, await deliveredWith(firstKeys, 1));
    }, 120_000);

    it('re-encrypt moves every secret to the first key and erases the clear copy: then only that key is needed', async () => {
      const keys = `${newKey},${firstKeys}`;
      const reencrypted = await runWebhookSecretsCli(['re-encrypt'], {
        ...database.env,
        WEBHOOK_SECRET_KEYS: keys,
      });
      expect(reencrypted.code, reencrypted.stderr).toBe(0);
      expect(reencrypted.stdout).toMatch(
        /re-encrypted the secrets of 1 webhook subscription\(s\) under key "second"/,
      );
      const [row] = await database.query<{ secret: string | null; secret_encrypted: string }>(
        'SELECT secret, secret_encrypted FROM webhook_subscriptions',
      );
      expect(row).toEqual({ secret: null, secret_encrypted: expect.stringMatching(/^v2:second:/) });
      expectNoSecret(await dump(database), [legacySecret]);

      verifySignature(legacySecret, await deliveredWith(newKey, 2));
    }, 120_000);

    it.each([
      [
        'the old key only',
        () => firstKeys,
        /^Refusing to start: a webhook secret is encrypted with key "second", which WEBHOOK_SECRET_KEYS lacks/,
      ],
      [
        'a wrong key under the right id',
        () => key('second'),
        /^Refusing to start: key "second" does not decrypt a webhook secret encrypted with it/,
      ],
      [
        'no key',
        () => '',
        /^Invalid configuration: WEBHOOK_SECRET_KEYS is not set: with DATABASE_URL/,
      ],
      [
        'a malformed key',
        () => 'second:c2hvcnQ=',
        /^Invalid configuration: WEBHOOK_SECRET_KEYS must be a comma-separated list of id:key.*\(its value not shown\)$/,
      ],
    ])(
      'refuses to start with %s, in one line, before serving',
      async (_, keys, reason) => {
        const service = new ServiceProcess({
          ...database.env,
          WEBHOOK_SECRET_KEYS: keys(),
        });
        const exit = await service.exited;
        expect(exit.code).toBe(1);
        const { stderr } = service.output;
        expect(stderr.trimEnd().split('\n')).toHaveLength(1);
        expect(stderr.trimEnd()).toMatch(reason);
        expect(stderr).not.toContain(keys().split(':')[1] || '\u0000');
      },
      60_000,
    );
  });
});
