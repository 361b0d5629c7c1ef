import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import type { DatabaseSchema } from './database-schema.js';
import { DatabaseServer } from './database-server.js';
import { DATABASE_SCHEMA, MigrationsAtStart } from './migrations-at-start.js';

@Module({
  providers: [{ provide: DatabaseServer, inject: [AppConfig], useFactory: DatabaseServer.connect }],
  exports: [DatabaseServer],
})
class DatabaseServerModule {}

/**
 * TypeORM on PostgreSQL, with the entities and migrations the application gathered from
 * its modules; pending migrations run before the service accepts requests (see
 * MigrationsAtStart).
 */
@Module({})
export class DatabaseModule {
  static forRoot(schema: DatabaseSchema): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        DatabaseServerModule,
        TypeOrmModule.forRootAsync({
          imports: [DatabaseServerModule],
          inject: [DatabaseServer, AppConfig],
          useFactory: (server: DatabaseServer, config: AppConfig) =>
            dataSourceOptions(server.url, config, schema),
        }),
      ],
      providers: [MigrationsAtStart, { provide: DATABASE_SCHEMA, useValue: schema }],
    };
  }
}
