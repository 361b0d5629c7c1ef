import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { MetricsModule } from '../metrics/metrics.module.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { TokenRevocationListener } from './token-revocation.listener.js';
import { TokensModule } from './tokens.module.js';

/**
 * Bearer tokens on every route: the passport strategy, the guard, and the listener that
 * keeps the verified-token cache honest.
 */
@Module({
  imports: [PassportModule, TokensModule, MetricsModule],
  providers: [
    BearerStrategy,
    TokenRevocationListener,
    { provide: APP_GUARD, useClass: BearerAuthGuard },
  ],
  exports: [TokensModule],
})
export class AuthModule {}
