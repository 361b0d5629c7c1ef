import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DatabaseNotifications } from '../database/database-notifications.js';
import type { ApiToken } from './entities/api-token.entity.js';
import { TOKEN_REVOKED_CHANNEL } from './token-revocations.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/**
 * LISTENs for token revocations (on the process's notification connection: see
 * DatabaseNotifications) and evicts each revoked token from this process's cache. The
 * cache keeps tokens only while the connection is listening: when it is lost,
 * announcements may be missed, so the cache is emptied and stays off until the listener
 * is back; tokens are checked in the database meanwhile.
 */
@Injectable()
export class TokenRevocationListener implements OnModuleInit, OnModuleDestroy {
  private stopped = false;

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly verified: VerifiedTokenCache<ApiToken>,
  ) {}

  /** The service starts only once it is listening. */
  async onModuleInit(): Promise<void> {
    await this.notifications.listen(TOKEN_REVOKED_CHANNEL, {
      notified: (hash) => {
        if (hash) this.verified.evict(hash);
      },
      listening: () => {
        if (!this.stopped) this.verified.startCaching();
      },
      lost: () => this.verified.stopCaching(),
    });
    if (!this.stopped) this.verified.startCaching();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    this.verified.stopCaching();
  }
}
