import { Module } from '@nestjs/common';
import { APP_SCHEMA } from '../app.schema.js';
import { APP_SCOPES } from '../app.scopes.js';
import { TokensModule } from '../auth/tokens.module.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';

/** What the token CLI needs: the configuration, the database and the token store. */
@Module({
  imports: [ConfigModule, DatabaseModule.forRoot(APP_SCHEMA), TokensModule.forRoot(APP_SCOPES)],
})
export class TokenCliModule {}
