import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningSecret } from '../../src/webhooks/webhook-signature.js';
import {
  runTokenCli,
  runWebhookSecretsCli,
  send,
  ServiceProcess,
  startService,
} from '../support/built-service.js';
import {
  createTestDatabase,
  type TestDatabase,
  describeOnEmbeddedRun,
} from '../support/test-database.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';

interface Subscription {
  id: string;
  secret: string;
  lastError: string | null;
  previousSecretExpiresAt?: string | null;
}

/**
 * What someone who can write the database's rows, but holds no key, can do with the
 * stored secrets: move one to another subscription or column, give a previous secret a
 * later end, or store a secret in clear. None of it makes a delivery carry a signature it
 * should not: the attempt is not made, and a warning says why.
 */
describe('webhook secrets bound to their subscription and column', () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let service: ServiceProcess;
  let url: string;
  let token: string;
  let nextPlant = 1;
  const env = () => ({
    ...database.env,
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    RETENTION_SWEEP_INTERVAL_MS: '1000',
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await send(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: answer.status, json: () => JSON.parse(answer.body) as Subscription };
  };
  const subscribe = async (name: string) =>
    (await call('POST', '/webhooks', { url: `${receiver.url}?${name}` })).json();
  const createPlant = async () => {
    const id = nextPlant++;
    expect((await call('POST', '/plants', { id, name: `plant ${id}` })).status).toBe(200);
    return id;
  };
  /** Why the service did not attempt a delivery to the subscription, as its warning says. */
  const attemptNotMade = async (id: string) => {
    const prefix = `webhook attempt not made for subscription ${id}: `;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const reason = service.output.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg)
        .find((message) => message.startsWith(prefix))
        ?.slice(prefix.length);
      if (reason !== undefined) return reason;
      if (Date.now() > deadline) throw new Error(`no attempt refused for subscription ${id}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await WebhookReceiver.start();
    ({ service, url } = await startService(env()));
    const issued = await runTokenCli(
      ['create', '--name', 'operator', '--scopes', 'plants:write,webhooks:manage'],
      { ...database.env },
    );
    expect(issued.code, issued.stderr).toBe(0);
    token = issued.stdout.trim();
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await receiver.stop();
    await database.drop();
  });

  it("makes no delivery with a secret moved to another subscription's row", async () => {
    const a = await subscribe('a');
    const b = await subscribe('b');
    await database.query(`
      UPDATE webhook_subscriptions AS s SET secret_encrypted = o.secret_encrypted
      FROM webhook_subscriptions AS o
      WHERE (s.id, o.id) IN (('${a.id}', '${b.id}'), ('${b.id}', '${a.id}'))`);
    await createPlant();
    for (const { id } of [a, b]) {
      expect(await attemptNotMade(id)).toMatch(
        /does not decrypt a webhook secret encrypted with it: .*moved from its subscription/,
      );
    }
    expect(receiver.received).toEqual([]);
    expect((await call('DELETE', `/webhooks/${a.id}`)).status).toBe(204);
    expect((await call('DELETE', `/webhooks/${b.id}`)).status).toBe(204);
  }, 60_000);

  it('never signs with a previous secret whose end was moved later', async () => {
    const subscription = await subscribe('rotated');
    const rotated = await call('POST', `/webhooks/${subscription.id}/rotate-secret`, {
      overlapSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    const [stored] = await database.query<{ ends: Date }>(
      `SELECT previous_secret_expires_at AS ends FROM webhook_subscriptions
       WHERE id = '${subscription.id}'`,
    );
    expect(stored.ends.toISOString()).toBe(rotated.json().previousSecretExpiresAt);
    await database.query(
      `UPDATE webhook_subscriptions
       SET previous_secret_expires_at = previous_secret_expires_at + interval '1 day'
       WHERE id = '${subscription.id}'`,
    );
    await createPlant();
    expect(await attemptNotMade(subscription.id)).toMatch(/or its overlap changed/);
    expect(receiver.received).toEqual([]);
    expect((await call('DELETE', `/webhooks/${subscription.id}`)).status).toBe(204);
  }, 60_000);

  it('erases a previous secret once its overlap has ended (the retention sweep)', async () => {
    const subscription = await subscribe('erased');
    const rotated = await call('POST', `/webhooks/${subscription.id}/rotate-secret`, {
      overlapSeconds: 1,
    });
    expect(rotated.status).toBe(200);
    const stored = () =>
      database.query<{ previous_secret: string | null; ends: Date | null }>(
        `SELECT previous_secret, previous_secret_expires_at AS ends FROM webhook_subscriptions
         WHERE id = '${subscription.id}'`,
      );
    expect((await stored())[0].previous_secret).toMatch(/^v2:/);
    const deadline = Date.now() + 20_000;
    while ((await stored())[0].previous_secret !== null) {
      if (Date.now() > deadline) throw new Error('the ended previous secret was kept');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await stored()).toEqual([{ previous_secret: null, ends: null }]);
    expect((await call('DELETE', `/webhooks/${subscription.id}`)).status).toBe(204);
  }, 60_000);

  it('after the contract step stores no clear secret, and signs with none that is there anyway', async () => {
    const reencrypted = await runWebhookSecretsCli(['re-encrypt'], { ...database.env });
    expect(reencrypted.code, reencrypted.stderr).toBe(0);
    expect(reencrypted.stdout).toMatch(/no clear copy is left, and none can be stored again/);
    const clear = generateSigningSecret();
    const insertClear = `INSERT INTO webhook_subscriptions (url, secret)
      VALUES ('${receiver.url}?clear', '${clear}') RETURNING id`;
    await expect(database.query(insertClear)).rejects.toThrow(
      /violates check constraint "webhook_subscriptions_clear_secret_retired"/,
    );

    // Written anyway, by someone able to drop and add the constraint (the tables' owner).
    await database.query(
      'ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_clear_secret_retired',
    );
    const [{ id }] = await database.query<{ id: string }>(insertClear);
    await database.query(`ALTER TABLE webhook_subscriptions
      ADD CONSTRAINT webhook_subscriptions_clear_secret_retired CHECK (secret IS NULL) NOT VALID`);
    await service.stop();
    ({ service, url } = await startService(env()));
    expect(service.output.stdout).toMatch(
      /1 webhook subscription\(s\) hold a secret in clear although webhook-secrets re-encrypt retired clear secrets: they are not used to sign/,
    );
    await createPlant();
    expect(await attemptNotMade(id)).toMatch(
      /no encrypted secret, and webhook-secrets re-encrypt retired clear secrets/,
    );
    expect(receiver.received).toEqual([]);

    // A subscription made the usual way still delivers, signed with its own secret.
    const fresh = await subscribe('fresh');
    const plant = await createPlant();
    const [delivery] = await receiver.waitFor(1);
    expect(JSON.parse(delivery.body)).toMatchObject({ id: plant });
    verifySignature(fresh.secret, delivery);
  }, 120_000);
});

describeOnEmbeddedRun("the embedded database's key file", () => {
  it('refuses to start, in one line, when group or others may read it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-key-'));
    try {
      const file = join(dataDir, 'webhook-secret.key');
      await writeFile(file, `embedded:${randomBytes(32).toString('base64')}\n`, { mode: 0o644 });
      const service = new ServiceProcess({ DATA_DIR: dataDir });
      expect((await service.exited).code).toBe(1);
      expect(service.output.stderr).toBe(
        `Invalid configuration: ${file} is open to group or others (mode 0644): make it readable by its owner alone (chmod 600)\n`,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
