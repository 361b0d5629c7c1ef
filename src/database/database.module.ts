import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import { DatabaseServer } from './database-server.js';
import { MigrationsAtStart } from './migrations.js';

@Module({
  providers: [{ provide: DatabaseServer, inject: [AppConfig], useFactory: DatabaseServer.connect }],
  exports: [DatabaseServer],
})
class DatabaseServerModule {}

/**
 * TypeORM on PostgreSQL; pending migrations run before the service accepts requests (see
 * MigrationsAtStart).
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      imports: [DatabaseServerModule],
      inject: [DatabaseServer, AppConfig],
      useFactory: (server: DatabaseServer, config: AppConfig) =>
        dataSourceOptions(server.url, config),
    }),
  ],
  providers: [MigrationsAtStart],
})
export class DatabaseModule {}
