import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { EmbeddedPostgresServer } from '../../src/database/embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL superuser URL; each test file creates and drops its own database there. */
    databaseAdminUrl: string;
  }
}

/**
 * One PostgreSQL server for the whole run: DATABASE_URL when it is set, otherwise an
 * embedded one in a temporary directory, removed afterwards.
 */
export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide('databaseAdminUrl', process.env.DATABASE_URL);
    return;
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-test-'));
  const server = await EmbeddedPostgresServer.open(dataDir, { log: () => undefined });
  project.provide('databaseAdminUrl', server.superuserUrl);
  return async () => {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  };
}
