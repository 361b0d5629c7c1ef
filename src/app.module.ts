import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { HttpErrorFilter } from './common/filters/http-error.filter.js';
import { RequestValidationPipe } from './common/validation/validation.pipe.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PlantsModule } from './plants/plants.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ShutdownModule } from './shutdown/shutdown.module.js';

/**
 * The service. Its globals are providers (APP_FILTER, APP_PIPE, and APP_GUARD in
 * AuthModule and RateLimitModule), so an app built from this module in a test behaves
 * as in production. Global guards run in the order their modules are imported: the
 * rate limit counts per token, so it comes after authentication.
 */
@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    DatabaseModule,
    AuthModule,
    RateLimitModule,
    MetricsModule,
    HealthModule,
    ShutdownModule,
    PlantsModule,
  ],
  providers: [
    { provide: APP_FILTER, useClass: HttpErrorFilter },
    { provide: APP_PIPE, useClass: RequestValidationPipe },
  ],
})
export class AppModule {}
