import { type DynamicModule, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { DatabaseNotificationsModule } from '../database/database-notifications.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { AnonymousRequestQueue } from './anonymous-request-queue.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import type { GrantableScopes } from './scopes.js';
import { TokenRevocationListener } from './token-revocation.listener.js';
import { TokensModule } from './tokens.module.js';

/**
 * Bearer tokens: the passport strategy, the guard (made global by AppModule, before the
 * rate limit), and the listener that keeps the verified-token cache honest.
 */
@Module({
  imports: [PassportModule, MetricsModule, DatabaseNotificationsModule],
  providers: [BearerStrategy, TokenRevocationListener, BearerAuthGuard, AnonymousRequestQueue],
  exports: [BearerAuthGuard],
})
export class AuthModule {
  /** Tokens may be granted `scopes`, which the feature modules declare. */
  static forRoot(scopes: GrantableScopes): DynamicModule {
    return { module: AuthModule, imports: [TokensModule.forRoot(scopes)] };
  }
}
