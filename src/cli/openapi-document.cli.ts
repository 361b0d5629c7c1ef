import './compile-cache.js';
import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from '../app.module.js';
import { createHttpAdapter, HTTP_APP_OPTIONS } from '../common/http/http-app.js';
import { createOpenApiDocument } from '../openapi/openapi-document.js';

/**
 * `npm run openapi`: writes the document the service serves at /openapi.json to a file,
 * without a database. Nest's preview mode resolves the modules and reads the
 * controllers' metadata but instantiates no provider, so nothing connects.
 */
async function main(outputPath: string | undefined): Promise<void> {
  if (outputPath === undefined) throw new Error('usage: openapi-document.cli.js <output.json>');
  // Which proxies are trusted changes no route or schema.
  const adapter = createHttpAdapter({ trustedProxies: [] });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, adapter, {
    ...HTTP_APP_OPTIONS,
    preview: true,
    logger: ['error', 'warn'],
  });
  try {
    await writeFile(outputPath, `${JSON.stringify(createOpenApiDocument(app), null, 2)}\n`);
  } finally {
    await app.close();
  }
}

try {
  await main(process.argv[2]);
} catch (error) {
  process.stderr.write(`openapi: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
