import { Injectable, Logger, Module, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { postgresPool } from './postgres-pool.js';
import { openSession, type SessionConnection } from './session-connection.js';

/** After losing its connection, the listener tries again this often. */
const RECONNECT_DELAY_MS = 1_000;

/** What a feature listening on a channel is told. */
export interface ChannelListener {
  /** A notification, delivered once the transaction that sent it committed. */
  notified(payload: string): void;
  /** Listening again after a loss: what was sent meanwhile was missed. */
  listening?(): void;
  /** The connection is lost: notifications are missed until `listening`. */
  lost?(): void;
}

/**
 * PostgreSQL notifications for the whole process, on one connection (a session: see
 * openSession) however many channels the features LISTEN on. LISTEN needs a session,
 * while NOTIFY works through a transaction pooler too. A lost connection is reopened
 * every second, and LISTENs on every channel again.
 */
@Injectable()
export class DatabaseNotifications implements OnModuleDestroy {
  private readonly logger = new Logger('DatabaseNotifications');
  private readonly pool: pg.Pool;
  private readonly channels = new Map<string, ChannelListener>();
  private session: SessionConnection | undefined;
  private opening: Promise<SessionConnection | undefined> | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly config: AppConfig,
  ) {
    this.pool = postgresPool(dataSource);
  }

  /**
   * LISTENs on `channel` (a plain identifier), now and after every reconnection.
   * Resolves once listening; rejects when the connection cannot be opened, and keeps
   * trying in the background.
   */
  async listen(channel: string, listener: ChannelListener): Promise<void> {
    this.channels.set(channel, listener);
    try {
      const session = this.session ?? (await this.connect());
      await session?.client.query(`LISTEN ${channel}`);
    } catch (error) {
      this.retry();
      throw error;
    }
  }

  /** Before TypeORM closes the pool (on application shutdown), which waits for this connection. */
  onModuleDestroy(): void {
    this.stopped = true;
    clearTimeout(this.reconnect);
    const session = this.session;
    this.session = undefined;
    session?.close();
  }

  private connect(): Promise<SessionConnection | undefined> {
    this.opening ??= this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async open(): Promise<SessionConnection | undefined> {
    const session = await openSession(this.pool, this.config.databaseDirectUrl);
    const { client } = session;
    const lost = (error?: Error) => this.lost(session, error);
    client.on('notification', ({ channel, payload }) =>
      this.channels.get(channel)?.notified(payload ?? ''),
    );
    client.on('error', lost).on('end', lost);
    try {
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      session.close();
      throw error;
    }
    if (this.stopped) {
      session.close();
      return undefined;
    }
    this.session = session;
    return session;
  }

  private lost(session: SessionConnection, error?: Error): void {
    if (this.session !== session) return;
    this.session = undefined;
    session.close();
    for (const listener of this.channels.values()) listener.lost?.();
    this.logger.warn(
      `lost the LISTEN connection (${error?.message ?? 'connection ended'}); notifications are missed until it is back (${[...this.channels.keys()].join(', ')})`,
    );
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.reconnect !== undefined) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      if (this.session !== undefined) return;
      this.connect().then(
        (session) => {
          if (session === undefined) return;
          this.logger.log('the LISTEN connection is back');
          for (const listener of this.channels.values()) listener.listening?.();
        },
        () => this.retry(),
      );
    }, RECONNECT_DELAY_MS);
    // A start that failed must not be kept alive by its retries.
    this.reconnect.unref();
  }
}

/** Import it where a feature LISTENs: one connection for every channel of the process. */
@Module({ providers: [DatabaseNotifications], exports: [DatabaseNotifications] })
export class DatabaseNotificationsModule {}
