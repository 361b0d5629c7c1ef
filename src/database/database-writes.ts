import { Injectable, Logger, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { READ_ONLY_SQLSTATE } from './database-errors.js';
import { postgresPool } from './postgres-pool.js';

/** Command tags of statements that changed data: the server took a write. */
const WRITE_TAG = /^(INSERT|UPDATE|DELETE|MERGE) /;

/**
 * Whether the database takes writes, as the pool's connections see it, and the hook that
 * makes the pool follow the primary. Every connection is watched, whatever the code that
 * uses it (pg's pool directly, TypeORM, background workers):
 * - a statement refused because the server takes no writes (25006: a standby behind an
 *   endpoint that moved, a demoted primary, `default_transaction_read_only`) marks the
 *   connection, and the pool discards it when it comes back, so that the next connection
 *   goes where the endpoint now leads. Reads go on on the connections that met none.
 * - a statement that wrote (INSERT, UPDATE, DELETE, MERGE) says writes are taken again.
 * Each change is logged once. Once writes are taken again, a refusal on a connection
 * opened before that (a session begun read-only, left in the pool) is discarded without
 * changing the state: the server has moved on, the connection had not.
 */
@Injectable()
export class DatabaseWrites {
  private readonly logger = new Logger('Database');
  /** Each connection, with the count of returns to taking writes when it was first seen. */
  private readonly watched = new WeakMap<pg.PoolClient, number>();
  private readonly metReadOnly = new WeakSet<pg.PoolClient>();
  private refused = false;
  private returns = 0;

  constructor(@InjectDataSource() dataSource: DataSource) {
    const pool = postgresPool(dataSource);
    // 'acquire' comes for every connection handed out, those opened before this too.
    pool.on('acquire', (client) => this.watch(client));
    // pg's pool emits 'release' before it decides a connection's fate, and discards one
    // that is ending: the least invasive way to discard one TypeORM releases without error.
    pool.on('release', (_error, client) => {
      if (this.metReadOnly.has(client)) void client.end().catch(() => undefined);
    });
  }

  /** False from a write refused for a read-only server until a write succeeds again. */
  get acceptsWrites(): boolean {
    return !this.refused;
  }

  private watch(client: pg.PoolClient): void {
    if (this.watched.has(client)) return;
    this.watched.set(client, this.returns);
    client.connection.on('errorMessage', ({ code }: { code?: string }) => {
      if (code !== READ_ONLY_SQLSTATE) return;
      this.metReadOnly.add(client);
      if (this.watched.get(client) === this.returns) this.changed(true);
    });
    client.connection.on('commandComplete', ({ text }: { text: string }) => {
      if (this.refused && WRITE_TAG.test(text)) this.changed(false);
    });
  }

  private changed(refused: boolean): void {
    if (refused === this.refused) return;
    this.refused = refused;
    if (refused) {
      this.logger.warn(
        'the database refuses writes (read-only server): writes answer 503, and connections that met it are replaced',
      );
    } else {
      this.returns++;
      this.logger.log('the database takes writes again');
    }
  }
}

/** Import it where the database's write state is shown; one watcher for the process. */
@Module({ providers: [DatabaseWrites], exports: [DatabaseWrites] })
export class DatabaseWritesModule {}
