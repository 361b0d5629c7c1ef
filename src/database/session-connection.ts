import pg from 'pg';

/** A connection that is one database session until it is closed. */
export interface SessionConnection {
  client: pg.ClientBase;
  /** Ends the session: its LISTENs and advisory locks go with it. */
  close(): void;
}

/**
 * A connection of its own for what needs one database session throughout: LISTEN, and
 * session advisory locks. Through a transaction pooler (PgBouncer with
 * `pool_mode = transaction`) each statement may run in another server session, so with
 * DATABASE_DIRECT_URL these connect to PostgreSQL directly; otherwise they take a
 * connection from the pool and destroy it afterwards, since a pooled connection must
 * not keep session state.
 */
export async function openSession(
  pool: pg.Pool,
  directUrl: string | undefined,
): Promise<SessionConnection> {
  if (directUrl === undefined) {
    const client = await pool.connect();
    return { client, close: () => client.release(true) };
  }
  const client = new pg.Client({
    connectionString: directUrl,
    application_name: 'plant-store session',
    connectionTimeoutMillis: pool.options.connectionTimeoutMillis,
  });
  // A lost connection surfaces on the session's next query, or to the owner's listener.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return { client, close: () => void client.end().catch(() => undefined) };
}
