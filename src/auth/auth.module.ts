import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { MetricsModule } from '../metrics/metrics.module.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { TokensModule } from './tokens.module.js';

/** Bearer authentication: the passport strategy and the guard every route passes. */
@Module({
  imports: [PassportModule, TokensModule, MetricsModule],
  providers: [BearerStrategy, { provide: APP_GUARD, useClass: BearerAuthGuard }],
  exports: [TokensModule],
})
export class AuthModule {}
