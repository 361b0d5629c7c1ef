// `npm run lint:migrations`: lints the SQL the migrations run with squawk (.squawk.toml),
// so that a migration the previous release could not survive, or one that blocks traffic
// while it runs, fails CI (docs/extending.md, "Changing the schema"). The migrations are
// TypeScript, so each built one (dist/migrations, `npm run build` first) runs its up and
// its down against a stand-in QueryRunner that records their SQL, without a database.
// Each becomes one file as the migration runs it: the migrations' session settings, then
// its statements, in BEGIN ... COMMIT unless it says `transaction = false`.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SQUAWK = join(ROOT, 'node_modules', '.bin', 'squawk');
const SQUAWK_CONFIG = join(ROOT, '.squawk.toml');
/** Rules a migration already shipped breaks, each with its reason; see the file itself. */
export const EXCEPTIONS_FILE = join(ROOT, 'migrations', 'lint-exceptions.json');

/**
 * A down removes what its up added, which the release it returns to never used: dropping
 * is its purpose there, not a hazard for the code still running.
 */
const ALLOWED_IN_DOWN = new Set(['ban-drop-column', 'ban-drop-table']);

/** What each direction of a migration sends to the database, and how. */
function recorder(name, direction, statements) {
  return new Proxy(
    {},
    {
      get(_, member) {
        if (member === 'query') {
          return async (sql) => {
            statements.push(sql.trim().replace(/;$/, ''));
            return [];
          };
        }
        throw new Error(
          `${name}.${direction} uses queryRunner.${String(member)}: the migration linter ` +
            'records only queryRunner.query(), so write the SQL with it',
        );
      },
    },
  );
}

/** The file squawk reads for one direction of a migration: what its session runs. */
async function sqlFile(migration, name, direction, sessionSettings) {
  const statements = [];
  await migration[direction](recorder(name, direction, statements));
  const inTransaction = migration.transaction !== false;
  const lines = [
    `-- ${name} ${direction}, ${inTransaction ? 'in a transaction' : 'outside a transaction (transaction = false)'}`,
    '-- the migrations session (src/database/migrations.ts, migrationSessionSettings):',
    ...Object.entries(sessionSettings).map(([setting, value]) => `SET ${setting} = '${value}';`),
    ...(inTransaction ? ['BEGIN;'] : []),
    ...statements.map((statement) => `${statement};`),
    ...(inTransaction ? ['COMMIT;'] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/** squawk's findings in `files`, as its JSON reporter gives them. */
async function squawk(files) {
  try {
    await promisify(execFile)(SQUAWK, ['--config', SQUAWK_CONFIG, '--reporter', 'json', ...files], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return [];
  } catch (error) {
    // Findings exit 1 with their JSON; anything else is squawk failing.
    if (error.code !== 1 || !error.stdout?.trim().startsWith('[')) throw error;
    return JSON.parse(error.stdout);
  }
}

/**
 * Lints the migrations given as classes. `sessionSettings`: the settings each migration's
 * session runs with; `exceptions`: `{ migration, direction, rule, reason }` entries that
 * excuse one rule in one direction of one migration. Resolves to whether all passed and
 * a report naming each finding (migration, direction, rule) and each exception that
 * excused nothing.
 */
export async function lintMigrations(migrationClasses, { sessionSettings, exceptions }) {
  const directory = await mkdtemp(join(tmpdir(), 'plant-store-migrations-'));
  try {
    /** By file name: the migration and direction it holds, and its lines. */
    const files = new Map();
    for (const MigrationClass of migrationClasses) {
      const migration = new MigrationClass();
      const name = migration.name ?? MigrationClass.name;
      for (const direction of ['up', 'down']) {
        const file = `${name}.${direction}.sql`;
        const sql = await sqlFile(migration, name, direction, sessionSettings);
        await writeFile(join(directory, file), sql);
        files.set(file, { migration: name, direction, lines: sql.split('\n') });
      }
    }
    const findings = await squawk([...files.keys()].map((file) => join(directory, file)));
    const used = new Set();
    const problems = [];
    for (const finding of findings) {
      const { migration, direction, lines } = files.get(basename(finding.file));
      if (direction === 'down' && ALLOWED_IN_DOWN.has(finding.rule_name)) continue;
      const exception = exceptions.find(
        (entry) =>
          entry.migration === migration &&
          entry.direction === direction &&
          entry.rule === finding.rule_name,
      );
      if (exception) {
        used.add(exception);
        continue;
      }
      problems.push(
        `${migration} ${direction}: ${finding.rule_name}: ${finding.message}` +
          (finding.help ? ` (${finding.help})` : '') +
          `\n    ${lines[finding.line]?.trim()}`,
      );
    }
    const stale = exceptions
      .filter((entry) => !used.has(entry))
      .map(
        ({ migration, direction, rule }) =>
          `${migration} ${direction}: the exception for ${rule} excuses nothing any more: remove it from migrations/lint-exceptions.json`,
      );
    const report = [...problems, ...stale];
    return {
      passed: report.length === 0,
      report: report.length
        ? `${report.join('\n')}\n\nhttps://squawkhq.com/docs/rules; docs/extending.md, "Changing the schema"`
        : `${files.size / 2} migration(s), up and down: no finding`,
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Every migration class the build holds, with the session settings the service uses. */
async function builtMigrations() {
  const dist = join(ROOT, 'dist');
  if (!existsSync(join(dist, 'migrations'))) {
    throw new Error('no dist/migrations: build first (npm run build)');
  }
  const { AppConfig } = await import(pathToFileURL(join(dist, 'src/config/app-config.js')));
  const { migrationSessionSettings } = await import(
    pathToFileURL(join(dist, 'src/database/migrations.js'))
  );
  const classes = [];
  for (const file of (await readdir(join(dist, 'migrations'))).sort()) {
    if (!file.endsWith('.js')) continue;
    const module = await import(pathToFileURL(join(dist, 'migrations', file)));
    classes.push(
      ...Object.values(module).filter((value) => typeof value?.prototype?.up === 'function'),
    );
  }
  return {
    classes,
    sessionSettings: migrationSessionSettings(AppConfig.fromEnvironment({})),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { classes, sessionSettings } = await builtMigrations();
    const exceptions = JSON.parse(readFileSync(EXCEPTIONS_FILE, 'utf8'));
    const { passed, report } = await lintMigrations(classes, { sessionSettings, exceptions });
    (passed ? process.stdout : process.stderr).write(`lint:migrations: ${report}\n`);
    process.exitCode = passed ? 0 : 1;
  } catch (error) {
    process.stderr.write(`lint:migrations: ${error.message}\n`);
    process.exitCode = 2;
  }
}
