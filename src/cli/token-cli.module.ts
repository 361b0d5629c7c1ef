import { Module } from '@nestjs/common';
import { APP_SCHEMA } from '../app.schema.js';
import { APP_SCOPES } from '../app.scopes.js';
import { TokensModule } from '../auth/tokens.module.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { CommandLoggingModule } from '../logging/command-logging.module.js';

/**
 * What the token CLI needs: the configuration, the logger (on stderr: the audit trail's
 * lines), the database and the token store.
 */
@Module({
  imports: [
    ConfigModule,
    CommandLoggingModule,
    DatabaseModule.forRoot(APP_SCHEMA),
    TokensModule.forRoot(APP_SCOPES),
  ],
})
export class TokenCliModule {}
