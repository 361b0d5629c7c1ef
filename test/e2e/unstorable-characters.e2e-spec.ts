import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * On a database whose encoding cannot represent every character (LATIN1 has no emoji),
 * a create whose name it cannot store fails its batch's statement. That create alone is
 * refused, with 400; the creates that shared its statement are stored as usual.
 */
describe('POST /plants on a LATIN1 database', () => {
  let api: TestApp;
  let token: string;

  beforeAll(async () => {
    api = await createTestApp({}, undefined, { encoding: 'LATIN1' });
    token = await api.issueToken();
  });
  afterAll(() => api.close());

  const post = (plant: { id: number; name: string }) =>
    api.request({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: plant,
    });

  /** Sessions of this database waiting for a lock: the creates stuck behind `locker`. */
  const waitingForLock = async () => {
    const [{ n }] = await api.database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return n;
  };

  it('refuses the one name it cannot store with 400, and stores the rest of its batch', async () => {
    // While the table is locked, the two statements the service keeps in flight wait, and
    // every create sent meanwhile gathers into the one statement that follows them.
    const locker = new pg.Client({ connectionString: api.database.adminUrl });
    await locker.connect();
    await locker.query('BEGIN; LOCK TABLE plants IN EXCLUSIVE MODE');
    const batch = Array.from({ length: 9 }, (_, i) => ({
      id: 10 + i,
      name: i === 4 ? 'Sunflower 🌻' : `Café ${i}`,
    }));
    let answers: Awaited<ReturnType<typeof post>>[];
    try {
      const inFlight = [post({ id: 1, name: 'First' }), post({ id: 2, name: 'Second' })];
      await expect.poll(waitingForLock).toBe(2);
      const batched = batch.map(post);
      // Time for the creates to pass the guards and queue up behind the two statements.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await locker.query('COMMIT');
      answers = await Promise.all([...inFlight, ...batched]);
    } finally {
      await locker.end();
    }

    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 400, 200, 200, 200, 200]);
    expect(answers[6].json()).toEqual({
      error: 400,
      message: 'the request holds a character the database cannot store',
    });
    const rows = await api.database.query<{ id: number; name: string }>(
      'SELECT id::int, name FROM plants ORDER BY id',
    );
    expect(rows).toEqual([
      { id: 1, name: 'First' },
      { id: 2, name: 'Second' },
      ...[0, 1, 2, 3, 5, 6, 7, 8].map((i) => ({ id: 10 + i, name: `Café ${i}` })),
    ]);
  });
});
