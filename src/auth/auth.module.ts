import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MetricsModule } from '../metrics/metrics.module.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { ApiToken } from './entities/api-token.entity.js';
import { TokensService } from './tokens.service.js';

/** Bearer tokens: the store, the passport strategy, and the guard every route passes. */
@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiToken]), MetricsModule],
  providers: [TokensService, BearerStrategy, { provide: APP_GUARD, useClass: BearerAuthGuard }],
  exports: [TokensService],
})
export class AuthModule {}
