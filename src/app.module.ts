import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { HttpErrorFilter } from './common/filters/http-error.filter.js';
import { RequestValidationPipe } from './common/validation/validation.pipe.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { PlantsModule } from './plants/plants.module.js';

/**
 * The service. Its globals are providers (APP_FILTER, APP_PIPE, and APP_GUARD in
 * AuthModule), so an app built from this module in a test behaves as in production.
 */
@Module({
  imports: [ConfigModule, DatabaseModule, AuthModule, PlantsModule],
  providers: [
    { provide: APP_FILTER, useClass: HttpErrorFilter },
    { provide: APP_PIPE, useClass: RequestValidationPipe },
  ],
})
export class AppModule {}
