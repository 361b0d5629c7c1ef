import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  acceptsConnections,
  createOnNewConnection,
  freePort,
  issueToken,
  ServiceProcess,
} from '../support/built-service.js';
import {
  describeOnEmbeddedRun,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-database.js';

const CREATES = 50;
/** From the signal to npm's exit: the drain takes well under a second here. */
const STOP_LIMIT_MS = 15_000;

/** Whether any process is left in the process group `pgid`. */
function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// How npm and the service stop, not the database: the embedded run covers it
// (describeOnEmbeddedRun).
/**
 * The README's start commands, run as a user runs them (npm in a process group of its
 * own, as a terminal or a supervisor starts it), stopped as a supervisor or a terminal
 * stops them: the signal reaches the service itself, which drains as when signalled
 * directly, and npm exits 0 with nothing left behind.
 */
describeOnEmbeddedRun('every documented start command stops cleanly', () => {
  let database: TestDatabase;
  let token: string;
  let nextId = 1;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Migrated once, so that each start is the command's own, not the migrations'.
    token = await issueToken(database);
  });
  afterAll(() => database?.drop());

  it.each([
    { command: 'npm start', npmArgs: ['start'], stop: 'SIGTERM to npm', ctrlC: false },
    {
      command: 'npm run start:prod',
      npmArgs: ['run', 'start:prod'],
      stop: 'SIGTERM to npm',
      ctrlC: false,
    },
    {
      command: 'npm start',
      npmArgs: ['start'],
      stop: 'Ctrl-C (SIGINT to the group)',
      ctrlC: true,
    },
  ])(
    `$command, ${CREATES} creates on new connections, then $stop: each answered 200, the service drains, npm exits 0, nothing left running`,
    async ({ npmArgs, ctrlC }) => {
      const port = await freePort();
      const npm = new ServiceProcess(
        { ...database.env, PORT: String(port), SHUTDOWN_DELAY_MS: '0' },
        { npmArgs, ownProcessGroup: true },
      );
      try {
        const url = await npm.listening();
        const servicePid = Number(npm.logLines()[0].pid);

        const creates = Array.from({ length: CREATES }, () =>
          createOnNewConnection(url, token, nextId++),
        );
        await Promise.all(creates.map(({ sent }) => sent));
        if (ctrlC) npm.killProcessGroup('SIGINT');
        else npm.signal('SIGTERM');

        const answers = await Promise.all(creates.map(({ answer }) => answer));
        expect(
          answers.map((answer) => (answer instanceof Error ? answer.message : answer.status)),
        ).toEqual(Array.from({ length: CREATES }, () => 200));
        expect(await bounded(npm.exited, STOP_LIMIT_MS, 'npm exiting')).toEqual({
          code: 0,
          signal: null,
        });
        // On Ctrl-C the service gets the terminal's SIGINT and npm's copy of it (as one,
        // when the second comes before the first is taken): one stop either way.
        expect(npm.logLines().map((line) => line.msg)).toContain('stopped');
        expect(processGroupAlive(npm.pid)).toBe(false);
        expect(() => process.kill(servicePid, 0)).toThrow(/ESRCH/);
        expect(await acceptsConnections(port)).toBe(false);
      } finally {
        if (processGroupAlive(npm.pid)) npm.killProcessGroup();
        await npm.stop();
      }
    },
    // A start takes 3 s on an idle machine, and over 10 s on two busy cores.
    60_000,
  );
});
