import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATE_TIME_KEY, Keyset, UUID_KEY } from '../../src/common/pagination/keyset.js';
import { WebhookSubscription } from '../../src/webhooks/entities/webhook-subscription.entity.js';
import { WEBHOOKS_OLDEST_FIRST } from '../../src/webhooks/webhooks.repository.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The shared keyset (src/common/pagination/keyset.ts) on a real table whose timestamps
 * have microseconds, as SQL's now() writes them: webhook_subscriptions.created_at.
 */
describe('keyset pagination over a timestamp and an id', () => {
  let api: TestApp;
  /** The subscriptions in the order a list must give them. */
  const expected: string[] = [];

  /** Every id the keyset lists, following its cursors, `limit` a page (20 pages at most). */
  async function listAll(keyset: Keyset<WebhookSubscription>, limit: number) {
    const subscriptions = api.app.get(DataSource).getRepository(WebhookSubscription);
    const listed: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const rows = await keyset
        .page(
          subscriptions.createQueryBuilder('subscription'),
          keyset.startAfter(cursor),
          limit + 1,
        )
        .getMany();
      const { items, nextCursor } = keyset.pageOf(rows, limit);
      listed.push(...items.map(({ id }) => id));
      if (nextCursor === undefined) return listed;
      cursor = nextCursor;
    }
    return listed;
  }

  beforeAll(async () => {
    api = await createTestApp();
    // Two in one millisecond, then one per millisecond: microseconds each time.
    const rows = await api.database.query<{ id: string }>(`
      INSERT INTO webhook_subscriptions (url, created_at)
      SELECT 'http://127.0.0.1:9/' || n, timestamptz '2026-07-01 12:00:00.000100Z' + offsets.at
      FROM unnest(ARRAY[interval '0', interval '0.000200 s', interval '0.001300 s',
                        interval '0.002400 s', interval '0.003500 s']) WITH ORDINALITY AS offsets (at, n)
      ORDER BY n
      RETURNING id`);
    // Within one millisecond, by id.
    const [first, second, ...rest] = rows.map(({ id }) => id);
    expected.push(...[first, second].sort(), ...rest);
  });
  afterAll(() => api.close());

  it.each([1, 2, 3, 10])(
    'lists each row once, in order, compared at the millisecond (limit %i)',
    async (limit) => {
      expect(await listAll(WEBHOOKS_OLDEST_FIRST, limit)).toEqual(expected);
    },
  );

  it('repeats rows when the microseconds are compared with a millisecond cursor (the failure atMilliseconds prevents)', async () => {
    const asStored = new Keyset<WebhookSubscription>(
      { property: 'createdAt', codec: DATE_TIME_KEY },
      { property: 'id', codec: UUID_KEY },
    );
    const listed = await listAll(asStored, 2);
    expect(new Set(listed).size).toBeLessThan(listed.length);
  });

  it('refuses a cursor it did not issue, and one of another list', async () => {
    const base64url = (text: string) => Buffer.from(text).toString('base64url');
    for (const cursor of [
      base64url('["2026-07-01T12:00:00.000Z"]'),
      base64url('["2026-07-01T12:00:00Z","00000000-0000-4000-8000-000000000000"]'),
      base64url('[ "2026-07-01T12:00:00.000Z","00000000-0000-4000-8000-000000000000"]'),
      base64url('7'),
    ]) {
      expect(() => WEBHOOKS_OLDEST_FIRST.startAfter(cursor)).toThrow(/cursor is not one/);
    }
  });
});
