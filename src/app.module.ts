import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { APP_SCHEMA } from './app.schema.js';
import { APP_SCOPES } from './app.scopes.js';
import { AuthModule } from './auth/auth.module.js';
import { BearerAuthGuard } from './auth/bearer-auth.guard.js';
import { HttpErrorFilter } from './common/filters/http-error.filter.js';
import { RequestValidationPipe } from './common/validation/validation.pipe.js';
import { ConfigModule } from './config/config.module.js';
import { classifyDatabaseError } from './database/database-error.classifier.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PlantsModule } from './plants/plants.module.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { classifyShutdownError } from './shutdown/shutting-down.error.js';
import { ShutdownModule } from './shutdown/shutdown.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/**
 * The service. Its globals are providers, all here (APP_FILTER, APP_PIPE, APP_GUARD), so
 * an app built from this module in a test behaves as in production. A feature module is
 * registered by adding it to `imports`, its scopes to src/app.scopes.ts, and its entities and
 * migrations to src/app.schema.ts.
 */
@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    DatabaseModule.forRoot(APP_SCHEMA),
    AuthModule.forRoot(APP_SCOPES),
    RateLimitModule,
    MetricsModule,
    HealthModule,
    ShutdownModule,
    PlantsModule,
    WebhooksModule,
  ],
  providers: [
    // Global guards run in the order they are provided: the rate limit counts per token,
    // so authentication comes first.
    { provide: APP_GUARD, useExisting: BearerAuthGuard },
    { provide: APP_GUARD, useExisting: RateLimitGuard },
    {
      provide: APP_FILTER,
      useFactory: () => new HttpErrorFilter([classifyDatabaseError, classifyShutdownError]),
    },
    { provide: APP_PIPE, useClass: RequestValidationPipe },
  ],
})
export class AppModule {}
