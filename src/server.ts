import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { initApp } from './app.setup.js';
import { createHttpAdapter, HTTP_APP_OPTIONS } from './common/http/http-app.js';
import { AppConfig, ConfigError } from './config/app-config.js';
import { buildInfo } from './config/build-info.js';
import { refuseStart, StartRefusedError } from './config/refuse-start.js';
import type { StartedTracing } from './common/tracing/open-telemetry.js';
import { closeOnSignals } from './shutdown/shutdown-signals.js';
import { SecretKeyError, WebhookSecretKeyring } from './webhooks/secrets/webhook-secret-keyring.js';

/**
 * The address the server is bound to, as it is: `app.getUrl()` turns 0.0.0.0 into
 * 127.0.0.1, which hides that every interface is served.
 */
function listeningUrl(app: NestFastifyApplication): string {
  const { address, family, port } = app.getHttpServer().address() as AddressInfo;
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
}

/** Reads the configuration, starts the application and serves it until a signal stops it. */
export async function startServer(tracing: StartedTracing | undefined): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromEnvironment();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    refuseStart(error.message);
  }
  try {
    // Here, not in the provider that loads them again: Nest aborts on a provider's error.
    WebhookSecretKeyring.load(config);
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
    refuseStart(`Invalid configuration: ${error.message}`);
  }
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule,
    createHttpAdapter(config),
    { ...HTTP_APP_OPTIONS, instrument: tracing?.instrument },
  );
  try {
    await initApp(app);
  } catch (error) {
    if (!(error instanceof StartRefusedError)) throw error;
    await app.close();
    refuseStart(error.message);
  }
  closeOnSignals(app);
  await app.listen({ port: config.port, host: config.host });
  const { version, revision } = buildInfo();
  new Logger('Http').log(`plant-store ${version} (${revision}) listening on ${listeningUrl(app)}`);
}
