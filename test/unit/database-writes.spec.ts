import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DatabaseWrites } from '../../src/database/database-writes.js';

/** A pool as TypeORM keeps it (never connected), and connections it hands out. */
function watchedPool() {
  const pool = new pg.Pool();
  const writes = new DatabaseWrites({ driver: { master: pool } } as unknown as DataSource);
  const connection = () => {
    const client = Object.assign(new EventEmitter(), {
      connection: new EventEmitter(),
      end: vi.fn(async () => undefined),
    }) as unknown as pg.PoolClient & { end: ReturnType<typeof vi.fn> };
    pool.emit('acquire', client);
    return {
      client,
      refused: () => client.connection.emit('errorMessage', { code: '25006' }),
      completed: (text: string) => client.connection.emit('commandComplete', { text }),
      released: () => pool.emit('release', undefined, client),
    };
  };
  return { writes, connection };
}

describe('DatabaseWrites', () => {
  afterEach(() => vi.restoreAllMocks());

  it('takes writes to begin with', () => {
    expect(watchedPool().writes.acceptsWrites).toBe(true);
  });

  it('discards, when released, a connection refused for a read-only server, and only that one', () => {
    vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { writes, connection } = watchedPool();
    const readOnly = connection();
    const other = connection();
    readOnly.refused();
    other.client.connection.emit('errorMessage', { code: '23505' });
    expect(writes.acceptsWrites).toBe(false);
    readOnly.released();
    other.released();
    expect(readOnly.client.end).toHaveBeenCalledOnce();
    expect(other.client.end).not.toHaveBeenCalled();
  });

  it('takes writes again once a statement writes, and logs each change once', () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const { writes, connection } = watchedPool();
    const first = connection();
    first.refused();
    first.refused();
    connection().completed('SELECT 1');
    expect(writes.acceptsWrites).toBe(false);
    connection().completed('INSERT 0 1');
    expect(writes.acceptsWrites).toBe(true);
    expect(warn).toHaveBeenCalledOnce();
    expect(log).toHaveBeenCalledOnce();
  });

  it('after writes are taken again, ignores refusals on connections from before, not on newer ones', () => {
    vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const { writes, connection } = watchedPool();
    const stale = connection();
    connection().refused();
    connection().completed('UPDATE 1');
    stale.refused();
    expect(writes.acceptsWrites).toBe(true);
    stale.released();
    expect(stale.client.end).toHaveBeenCalledOnce();
    connection().refused();
    expect(writes.acceptsWrites).toBe(false);
  });
});
