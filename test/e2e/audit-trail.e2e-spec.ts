import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runTokenCli,
  send,
  type ServiceOnTestDatabase,
  startServiceOnTestDatabase,
} from '../support/built-service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

interface AuditRow {
  id: string;
  event: string;
  subject_type: string;
  subject_id: string;
  actor: string;
  actor_token_id: string | null;
  details: Record<string, unknown>;
}

/**
 * The audit trail as operators read it: rows of `audit_events`, and one JSON line per
 * event in the built service's log (stdout) or the token CLI's (stderr), on the database
 * the tests run on.
 */
describe('the audit trail of management', () => {
  const cliActor = `cli:${userInfo().username}`;
  let started: ServiceOnTestDatabase;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  /** The token the HTTP requests are made with, and its id. */
  let adminToken: string;
  let adminTokenId: string;
  /** Every secret the tests saw: none may appear in the trail or its lines. */
  const secrets: string[] = [];

  const query = <Row>(sql: string) => started.database.query<Row>(sql);
  const auditRows = (event: string) =>
    query<AuditRow>(
      `SELECT id::text, event, subject_type, subject_id, actor, actor_token_id, details
       FROM audit_events WHERE event = '${event}' ORDER BY id`,
    );
  const tokenId = async (name: string, where = 'revoked_at IS NULL AND rotated_at IS NULL') =>
    (
      await query<{ id: string }>(`SELECT id FROM api_tokens WHERE name = '${name}' AND ${where}`)
    )[0].id;
  const auditLines = (output: string) =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'audit event');
  /** The line an operator's log filter finds for `row`. */
  const lineOf = (row: AuditRow) =>
    expect.objectContaining({
      level: 'info',
      msg: 'audit event',
      event: row.event,
      auditId: row.id,
      subjectType: row.subject_type,
      subjectId: row.subject_id,
      actor: row.actor,
      actorTokenId: row.actor_token_id,
      details: row.details,
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  const token = (...args: string[]) => runTokenCli(args, env);
  const api = (method: string, path: string, body?: unknown) =>
    send(`${started.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const serviceLines = () =>
    auditLines(started.service.output.stdout).filter(
      (line) => line.actor === 'token:webhook-admin',
    );

  beforeAll(async () => {
    started = await startServiceOnTestDatabase({
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    env = { ...started.database.env };
    adminToken = (
      await token('create', '--name', 'webhook-admin', '--scopes', 'webhooks:manage')
    ).stdout.trim();
    secrets.push(started.token, adminToken);
    adminTokenId = await tokenId('webhook-admin');
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await started?.stop();
  });

  describe('of tokens, by the CLI (actor: cli and the OS user)', () => {
    it('token.created: the token, its name, scopes and expiry, and one line on stderr', async () => {
      const created = await token('create', '--name', 'audited', '--scopes', 'plants:read');
      expect(created.code).toBe(0);
      secrets.push(created.stdout.trim());
      const rows = await auditRows('token.created');
      const row = rows.find(({ details }) => details.name === 'audited')!;
      expect(row).toEqual({
        id: expect.any(String),
        event: 'token.created',
        subject_type: 'api_token',
        subject_id: await tokenId('audited'),
        actor: cliActor,
        actor_token_id: null,
        details: { name: 'audited', scopes: ['plants:read'], expiresAt: null },
      });
      expect(auditLines(created.stderr)).toEqual([lineOf(row)]);
    });

    it('token.rotated: the old token and its successor, which has its own token.created', async () => {
      const oldId = await tokenId('audited');
      const rotated = await token('rotate', '--name', 'audited', '--overlap', '1h');
      expect(rotated.code).toBe(0);
      secrets.push(rotated.stdout.trim());
      const newId = await tokenId('audited');
      const [rotation] = await auditRows('token.rotated');
      const creation = (await auditRows('token.created')).at(-1)!;
      expect(rotation).toEqual({
        id: expect.any(String),
        event: 'token.rotated',
        subject_type: 'api_token',
        subject_id: oldId,
        actor: cliActor,
        actor_token_id: null,
        details: {
          name: 'audited',
          successorId: newId,
          overlapEndsAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      });
      expect(creation).toMatchObject({
        subject_id: newId,
        details: { name: 'audited', scopes: ['plants:read'], rotatedFrom: oldId },
      });
      expect(auditLines(rotated.stderr)).toEqual([lineOf(creation), lineOf(rotation)]);
    });

    it('token.revoked: one per token revoked, the live one and the one in its overlap', async () => {
      const live = await tokenId('audited');
      const rotating = await tokenId('audited', 'rotated_at IS NOT NULL');
      const revoked = await token('revoke', 'audited');
      expect(revoked.code).toBe(0);
      const rows = await auditRows('token.revoked');
      expect(rows.map(({ subject_id }) => subject_id).sort()).toEqual([live, rotating].sort());
      for (const row of rows) {
        expect(row).toMatchObject({ actor: cliActor, details: { name: 'audited' } });
      }
      expect(auditLines(revoked.stderr)).toEqual(rows.map(lineOf));
    });

    it('records nothing for a command that changes nothing', async () => {
      const before = await query<{ count: number }>(
        'SELECT count(*)::integer AS count FROM audit_events',
      );
      expect((await token('revoke', 'audited')).code).toBe(1);
      expect((await token('rotate', '--name', 'nobody')).code).toBe(1);
      expect(
        await query<{ count: number }>('SELECT count(*)::integer AS count FROM audit_events'),
      ).toEqual(before);
    });
  });

  describe('of webhook subscriptions, over HTTP (actor: the bearer token)', () => {
    let subscriptionId: string;

    const recorded = async (event: string, details: Record<string, unknown>) => {
      const rows = await auditRows(event);
      expect(rows).toEqual([
        {
          id: expect.any(String),
          event,
          subject_type: 'webhook_subscription',
          subject_id: subscriptionId,
          actor: 'token:webhook-admin',
          actor_token_id: adminTokenId,
          details,
        },
      ]);
      await expect
        .poll(() => serviceLines().filter((line) => line.event === event))
        .toEqual([lineOf(rows[0])]);
    };

    it('webhook_subscription.created: its URL without the query string', async () => {
      const response = await api('POST', '/webhooks', {
        url: `${receiver.url}?key=receiver-key`,
        description: 'audited',
      });
      expect(response.status).toBe(201);
      const { id, secret } = JSON.parse(response.body) as { id: string; secret: string };
      subscriptionId = id;
      secrets.push(secret);
      await recorded('webhook_subscription.created', {
        url: receiver.url,
        description: 'audited',
      });
    });

    it('webhook_subscription.enabled: when it had been disabled (null: it was enabled)', async () => {
      expect((await api('POST', `/webhooks/${subscriptionId}/enable`)).status).toBe(200);
      await recorded('webhook_subscription.enabled', { disabledAt: null });
    });

    it('webhook_subscription.secret_rotated: the overlap, never either secret', async () => {
      const response = await api('POST', `/webhooks/${subscriptionId}/rotate-secret`, {
        overlapSeconds: 60,
      });
      expect(response.status).toBe(200);
      secrets.push((JSON.parse(response.body) as { secret: string }).secret);
      await recorded('webhook_subscription.secret_rotated', {
        overlapSeconds: 60,
        previousSecretExpiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    });

    it('webhook_subscription.redelivered: how many deliveries are sent again', async () => {
      expect((await api('POST', `/webhooks/${subscriptionId}/redeliver`)).status).toBe(202);
      await recorded('webhook_subscription.redelivered', { redelivered: 0 });
    });

    it('webhook_subscription.deleted: the history outlives the subscription', async () => {
      expect((await api('DELETE', `/webhooks/${subscriptionId}`)).status).toBe(204);
      await recorded('webhook_subscription.deleted', { url: receiver.url });
    });

    it('records nothing for a request that changes nothing (404)', async () => {
      const before = await query('SELECT id FROM audit_events');
      for (const path of ['enable', 'rotate-secret', 'redeliver']) {
        expect((await api('POST', `/webhooks/${subscriptionId}/${path}`)).status).toBe(404);
      }
      expect((await api('DELETE', `/webhooks/${subscriptionId}`)).status).toBe(404);
      expect(await query('SELECT id FROM audit_events')).toEqual(before);
    });
  });

  it('holds no secret, in the table or in the log lines', async () => {
    const [{ dump }] = await query<{ dump: string }>(
      "SELECT string_agg(row_to_json(a)::text, E'\\n') AS dump FROM audit_events a",
    );
    const lines = started.service.output.stdout;
    expect(secrets.length).toBeGreaterThan(3);
    for (const secret of secrets) {
      const distinctive = secret.slice(-20);
      expect(dump).not.toContain(distinctive);
      expect(lines).not.toContain(distinctive);
    }
  });

  it('is append-only: UPDATE, DELETE and TRUNCATE are refused, even to the owner', async () => {
    for (const statement of [
      "UPDATE audit_events SET actor = 'someone else'",
      'DELETE FROM audit_events',
      'TRUNCATE audit_events',
    ]) {
      await expect(query(statement)).rejects.toThrow(/audit_events is append-only/);
    }
    expect(
      (await query<{ count: number }>('SELECT count(*)::integer AS count FROM audit_events'))[0]
        .count,
    ).toBeGreaterThanOrEqual(9);
  });
});
