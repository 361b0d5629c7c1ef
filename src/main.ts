import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { initApp } from './app.setup.js';
import { createHttpAdapter, HTTP_APP_OPTIONS } from './common/http/http-app.js';
import { AppConfig, ConfigError } from './config/app-config.js';
import { closeOnSignals } from './shutdown/shutdown-signals.js';

async function bootstrap(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromEnvironment();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule,
    createHttpAdapter(config),
    HTTP_APP_OPTIONS,
  );
  await initApp(app);
  closeOnSignals(app);
  await app.listen({ port: config.port, host: config.host });
  new Logger('Http').log(`listening on ${await app.getUrl()}`);
}

await bootstrap();
