// `npm run bench:backup` (the project's Node.js, which the commands then run on): how long
// `npm run backup` and `npm run restore` take, how large the file is and each command's peak memory, for
// BENCH_BACKUP_PLANTS plants (1,000,000), on the embedded PostgreSQL and on the local
// server (BENCH_ADMIN_URL, postgres://postgres@127.0.0.1:5432/postgres); there also
// pg_dump -Fc and pg_restore, when Debian's are installed, for comparison: both restores
// BENCH_BACKUP_ROUNDS times (3), in turn, each into a new database, and the ratio of
// their lowest and of their median times. Seeded with generate_series, one plant in three tagged. The
// load average is printed at the start and the end (the machine may be shared). A
// benchmark: nothing asserts a timing. Everything it creates is removed.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { EmbeddedPostgresServer } from '../dist/src/database/embedded-postgres.js';

const run = promisify(execFile);
const PLANTS = Number(process.env.BENCH_BACKUP_PLANTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_BACKUP_ROUNDS ?? 3);
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CLI = 'dist/cli/backup.js';
const PG_BIN = '/usr/lib/postgresql/15/bin';
const { username, homedir, shell } = userInfo();
const LOGIN = {
  PATH: process.env.PATH,
  USER: username,
  LOGNAME: username,
  HOME: homedir,
  SHELL: shell,
  // One key for every command, both embedded servers included: a backup is signed with
  // it, and restored where it verifies.
  WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
};
const quiet = { log: () => undefined };

async function timed(label, work) {
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label}: ${seconds.toFixed(1)} s`);
  return { seconds, result };
}

/** Runs the CLI under /usr/bin/time, when there is one; its peak memory, in MB. */
async function cli(args, env) {
  const time = existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', 'peak RSS %M kB'] : [];
  const [command, ...rest] = [...time, process.execPath, CLI, ...args];
  const { stderr } = await run(command, rest, { env: { ...LOGIN, ...env } });
  const peak = /peak RSS (\d+) kB/.exec(stderr);
  if (!peak) return undefined;
  const megabytes = Math.round(Number(peak[1]) / 1024);
  console.log(`    peak memory: ${megabytes} MB`);
  return megabytes;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

async function query(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

async function seed(url, env) {
  await run(process.execPath, ['dist/src/cli/migration.cli.js', 'run'], {
    env: { ...LOGIN, ...env },
  });
  await timed(`  seeded ${PLANTS} plants`, () =>
    query(
      url,
      `INSERT INTO plants (id, name, tag)
       SELECT g, 'plant ' || g, CASE WHEN g % 3 = 0 THEN 'tag ' || (g % 100) END
       FROM generate_series(1, ${PLANTS}) AS g`,
    ),
  );
  await query(url, 'VACUUM ANALYZE plants');
}

async function measure(name, source, target, file) {
  console.log(name);
  await seed(source.url, source.env);
  const backup = await timed('  npm run backup', () => cli(['backup', file], source.env));
  const megabytes = (await stat(file)).size / 1e6;
  console.log(`  file: ${megabytes.toFixed(1)} MB`);
  const restore = await timed('  npm run restore', () => cli(['restore', file], target.env));
  const [{ count }] = await query(target.url, 'SELECT count(*)::int AS count FROM plants');
  if (count !== PLANTS) throw new Error(`restored ${count} plants of ${PLANTS}`);
  return {
    backup: backup.seconds,
    restore: restore.seconds,
    megabytes,
    peakMegabytes: { backup: backup.result, restore: restore.result },
  };
}

function median(...values) {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle)
    ? (sorted[middle - 1] + sorted[middle]) / 2
    : sorted[Math.floor(middle)];
}

/** Drops the databases made on the server so far (a round's, to keep the disk free). */
async function dropDatabases() {
  for (const name of databases.splice(0))
    await query(ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

const workDir = await mkdtemp(join(tmpdir(), 'plant-store-bench-backup-'));
const loadAtStart = load();
console.log(`${PLANTS} plants; load average ${loadAtStart}`);
const databases = [];
const servers = [];
const results = {};
try {
  // Both embedded servers are started here, so that the commands join them: their times
  // leave out initdb and start-up.
  const [source, target] = await Promise.all(
    ['source', 'target'].map(async (name) => {
      const dataDir = join(workDir, name);
      const server = await EmbeddedPostgresServer.open(dataDir, quiet);
      servers.push(server);
      return { url: server.url, env: { DATA_DIR: dataDir } };
    }),
  );
  results.embedded = await measure(
    'embedded PostgreSQL',
    source,
    target,
    join(workDir, 'embedded.backup.gz'),
  );

  const onServer = async () => {
    const name = `plant_store_bench_${randomBytes(4).toString('hex')}`;
    await query(ADMIN_URL, `CREATE DATABASE ${name}`);
    databases.push(name);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    return { url: url.toString(), env: { DATABASE_URL: url.toString() } };
  };
  const serverSource = await onServer();
  const serverTarget = await onServer();
  results.server = await measure(
    'PostgreSQL server',
    serverSource,
    serverTarget,
    join(workDir, 'server.backup.gz'),
  );
  if (existsSync(join(PG_BIN, 'pg_dump'))) {
    const dump = join(workDir, 'server.dump');
    const pgDump = await timed('  pg_dump -Fc', () =>
      run(join(PG_BIN, 'pg_dump'), ['-Fc', '-f', dump, '-d', serverSource.url]),
    );
    console.log(`  file: ${((await stat(dump)).size / 1e6).toFixed(1)} MB`);
    const file = join(workDir, 'server.backup.gz');
    const rounds = { restore: [], pgRestore: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`  round ${round} of ${ROUNDS}`);
      const ours = await onServer();
      const theirs = await onServer();
      rounds.restore.push(
        (await timed('    npm run restore', () => cli(['restore', file], ours.env))).seconds,
      );
      const pgRestore = await timed('    pg_restore --single-transaction', () =>
        run(join(PG_BIN, 'pg_restore'), [
          '--no-owner',
          '--single-transaction',
          '--exit-on-error',
          '-d',
          theirs.url,
          dump,
        ]),
      );
      rounds.pgRestore.push(pgRestore.seconds);
      await dropDatabases();
    }
    const [lowest, middle] = [Math.min, median].map((of) =>
      (of(...rounds.restore) / of(...rounds.pgRestore)).toFixed(2),
    );
    results.pgDump = { backup: pgDump.seconds, restore: rounds.pgRestore };
    results.rounds = { ...rounds, ratio: { lowest: Number(lowest), median: Number(middle) } };
    console.log(`  npm run restore / pg_restore: ${lowest}x (lowest), ${middle}x (median)`);
  }
  const loadAtEnd = load();
  console.log(`load average ${loadAtEnd}`);
  console.log(JSON.stringify({ plants: PLANTS, load: [loadAtStart, loadAtEnd], ...results }));
} finally {
  for (const server of servers) await server.close();
  await dropDatabases();
  await rm(workDir, { recursive: true, force: true });
}
