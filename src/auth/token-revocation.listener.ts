import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { postgresPool } from '../database/postgres-pool.js';
import { openSession, type SessionConnection } from '../database/session-connection.js';
import type { ApiToken } from './entities/api-token.entity.js';
import { TOKEN_REVOKED_CHANNEL } from './token-revocations.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/** After losing its connection, the listener tries again this often. */
const RECONNECT_DELAY_MS = 1_000;

/**
 * Holds one connection (a session: see openSession) that LISTENs for token revocations and evicts each revoked
 * token from this process's cache. The cache keeps tokens only while the connection is
 * listening: when it is lost, announcements may be missed, so the cache is emptied and
 * stays off until the listener is back.
 */
@Injectable()
export class TokenRevocationListener implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TokenRevocationListener.name);
  private readonly pool: pg.Pool;
  private session: SessionConnection | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly verified: VerifiedTokenCache<ApiToken>,
    private readonly config: AppConfig,
  ) {
    this.pool = postgresPool(dataSource);
  }

  /** The service starts only once it is listening. */
  async onModuleInit(): Promise<void> {
    await this.listen();
  }

  /** Before TypeORM closes the pool (on application shutdown), which waits for this connection. */
  onModuleDestroy(): void {
    this.stopped = true;
    clearTimeout(this.reconnect);
    this.verified.stopCaching();
    const session = this.session;
    this.session = undefined;
    session?.close();
  }

  private async listen(): Promise<void> {
    const session = await openSession(this.pool, this.config.databaseDirectUrl);
    const { client } = session;
    const lost = (error?: Error) => this.lost(session, error);
    client.on('notification', ({ payload }) => payload && this.verified.evict(payload));
    client.on('error', lost).on('end', lost);
    try {
      await client.query(`LISTEN ${TOKEN_REVOKED_CHANNEL}`);
    } catch (error) {
      session.close();
      throw error;
    }
    if (this.stopped) {
      session.close();
      return;
    }
    this.session = session;
    this.verified.startCaching();
  }

  private lost(session: SessionConnection, error?: Error): void {
    if (this.session !== session) return;
    this.session = undefined;
    this.verified.stopCaching();
    session.close();
    this.logger.warn(
      `lost the revocation listener (${error?.message ?? 'connection ended'}); tokens are checked in the database until it is back`,
    );
    this.retry();
  }

  private retry(): void {
    if (this.stopped) return;
    this.reconnect = setTimeout(() => {
      this.listen().then(
        () => this.logger.log('the revocation listener is back'),
        () => this.retry(),
      );
    }, RECONNECT_DELAY_MS);
  }
}
