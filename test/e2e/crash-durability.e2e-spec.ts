import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedPostgresServer } from '../../src/database/embedded-postgres.js';
import { issueToken, send, type ServiceProcess, startService } from '../support/built-service.js';
import { postmasterPid } from '../support/embedded-server.js';
import {
  acknowledged,
  asSentPlants,
  type CreateOutcome,
  type SentPlant,
  streamCreates,
} from '../support/plant-stream.js';
import {
  createTestDatabase,
  type TestDatabase,
  describeOnEmbeddedRun,
} from '../support/test-database.js';

/** Clients creating plants at once; the crash comes after this many were acknowledged. */
const WORKERS = 16;
const CRASH_AFTER_ACKNOWLEDGED = 150;

/**
 * Creates plants from many clients and calls `crash` in the middle of the stream, once
 * enough were acknowledged; resolves when every request has ended one way or another.
 */
async function createUntilCrash(url: string, token: string, crash: () => void) {
  let crashed = false;
  let acknowledgedCount = 0;
  return streamCreates(url, token, {
    workers: WORKERS,
    first: 0,
    done: () => crashed,
    observe: (outcome) => {
      if (outcome.status === 200) acknowledgedCount++;
      if (!crashed && acknowledgedCount >= CRASH_AFTER_ACKNOWLEDGED) {
        crashed = true;
        crash();
      }
    },
  });
}

async function storedPlants(databaseUrl: string): Promise<SentPlant[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT id::text, name, tag FROM plants');
    return asSentPlants(rows);
  } finally {
    await client.end();
  }
}

const key = (plant: SentPlant) => JSON.stringify(plant);

/**
 * What a crash may and may not do: before it every create was answered 200; after it,
 * every plant answered 200 is stored exactly as sent; the plants whose answer was lost
 * are either stored exactly as sent or not at all; nothing else is stored.
 */
async function expectNothingAcknowledgedLost(outcomes: CreateOutcome[], stored: SentPlant[]) {
  expect(
    outcomes.filter((outcome) => outcome.status !== undefined && outcome.status !== 200),
  ).toEqual([]);
  const acked = acknowledged(outcomes);
  expect(acked.length).toBeGreaterThanOrEqual(CRASH_AFTER_ACKNOWLEDGED);
  const storedKeys = new Set(stored.map(key));
  expect(acked.filter((plant) => !storedKeys.has(key(plant)))).toEqual([]);
  const sentKeys = new Set(outcomes.map((outcome) => key(outcome.plant)));
  expect(stored.filter((plant) => !sentKeys.has(key(plant)))).toEqual([]);
}

/** The restarted service answers the acknowledged plants itself. */
async function expectServedAgain(url: string, token: string, plants: SentPlant[]) {
  for (const plant of plants.slice(0, 20)) {
    const answer = await send(`${url}/plants/${plant.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(
      `{"id":${plant.id},"name":${JSON.stringify(plant.name)}` +
        `${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}`,
    );
  }
}

describe('kill -9 of the built service in the middle of concurrent creates', () => {
  const services: ServiceProcess[] = [];
  const start = async (env: Record<string, string>) => {
    const started = await startService(env, { ownProcessGroup: true });
    services.push(started.service);
    return started;
  };
  /** SIGTERM, so that a service on its embedded PostgreSQL stops that too. */
  const stopServices = async () => {
    for (const service of services.splice(0)) {
      service.signal('SIGTERM');
      await service.exited;
    }
  };

  describe('on DATABASE_URL', () => {
    let database: TestDatabase;
    beforeEach(async () => {
      database = await createTestDatabase();
    });
    afterEach(async () => {
      await stopServices();
      await database.drop();
    });

    it('loses no plant that was answered 200, and starts again at once', async () => {
      const env = { ...database.env };
      const { service, url } = await start(env);
      const token = await issueToken(database);

      const outcomes = await createUntilCrash(url, token, () => service.killProcessGroup());
      expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const restarted = await start(env);

      await expectNothingAcknowledgedLost(outcomes, await storedPlants(database.url));
      await expectServedAgain(restarted.url, token, acknowledged(outcomes));
    });
  });

  describeOnEmbeddedRun('on its embedded PostgreSQL', () => {
    let dataDir: string;
    beforeEach(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'plant-store-crash-'));
    });
    afterEach(async () => {
      await stopServices();
      await rm(dataDir, { recursive: true, force: true });
    });

    /**
     * The service's own database, joined and left as the token CLI does: while the
     * service runs, leaving does not stop the server.
     */
    const databaseUrl = async () => {
      const server = await EmbeddedPostgresServer.open(dataDir, { log: () => undefined });
      await server.close();
      return server.url;
    };

    it('killed together with its PostgreSQL: the restart waits out the dead server and loses nothing', async () => {
      const env = { DATA_DIR: dataDir };
      const { service, url } = await start(env);
      const token = await issueToken(await databaseUrl());
      const postmaster = postmasterPid(dataDir);

      // pg_ctl gives PostgreSQL a session of its own: a crash of the whole machine or
      // container, or the OOM killer, takes it down along with the service's group.
      const outcomes = await createUntilCrash(url, token, () => {
        service.killProcessGroup();
        process.kill(postmaster, 'SIGKILL');
      });
      await service.exited;
      // Its workers outlive it for a moment, and its postmaster.pid stays behind.
      expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(true);
      const restarted = await start(env);

      await expectNothingAcknowledgedLost(outcomes, await storedPlants(await databaseUrl()));
      await expectServedAgain(restarted.url, token, acknowledged(outcomes));
    });

    it('killed alone: the restart joins the PostgreSQL it left running, and stops it on SIGTERM', async () => {
      const env = { DATA_DIR: dataDir };
      const { service, url } = await start(env);
      const token = await issueToken(await databaseUrl());
      const postmaster = postmasterPid(dataDir);

      const outcomes = await createUntilCrash(url, token, () => service.killProcessGroup());
      await service.exited;
      const restarted = await start(env);
      expect(postmasterPid(dataDir)).toBe(postmaster);

      await expectNothingAcknowledgedLost(outcomes, await storedPlants(await databaseUrl()));
      await expectServedAgain(restarted.url, token, acknowledged(outcomes));
      restarted.service.signal('SIGTERM');
      expect(await restarted.service.exited).toEqual({ code: 0, signal: null });
      expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    });
  });
});
