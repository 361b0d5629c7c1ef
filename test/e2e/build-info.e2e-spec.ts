import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, send, startService } from '../support/built-service.js';
import { PACKAGE_VERSION } from '../support/release.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const ROOT = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
/** What the image's REVISION build argument sets. */
const IMAGE_REVISION = '0123456789abcdef0123456789abcdef01234567';

const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

/** Whether this tree is a git clone of its own (CI's is; an unpacked copy is not). */
function isClone(): boolean {
  try {
    return git('rev-parse', '--show-toplevel').trim() === ROOT;
  } catch {
    return false;
  }
}

/** The release the service at `url` names, in each place an operator looks. */
async function releaseNamed(service: ServiceProcess, url: string) {
  const startLine = service
    .logLines()
    .map(({ msg }) => String(msg))
    .find((msg) => msg.includes(' listening on '));
  const metrics = (await send(`${url}/metrics`)).body;
  const buildInfo = /^plant_store_build_info\{version="([^"]*)",revision="([^"]*)"\} 1$/m.exec(
    metrics,
  );
  const health = async (probe: string) => {
    const { status, body } = await send(`${url}/health/${probe}`);
    const { version, revision } = JSON.parse(body) as Record<string, unknown>;
    return { status, version, revision };
  };
  return {
    startLine,
    metric: buildInfo && { version: buildInfo[1], revision: buildInfo[2] },
    live: await health('live'),
    ready: await health('ready'),
  };
}

describe('the release a built service names: its start line, plant_store_build_info, its health', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  async function named(env: Record<string, string>) {
    const { service, url } = await startService({ ...database.env, ...env });
    try {
      return { url, release: await releaseNamed(service, url) };
    } finally {
      await service.stop();
    }
  }

  it("names package.json's version and the revision the image sets (PLANT_STORE_REVISION)", async () => {
    const { url, release } = await named({ PLANT_STORE_REVISION: IMAGE_REVISION });
    const expected = { version: PACKAGE_VERSION, revision: IMAGE_REVISION };
    expect(release).toEqual({
      startLine: `plant-store ${PACKAGE_VERSION} (${IMAGE_REVISION}) listening on ${url}`,
      metric: expected,
      live: { status: 200, ...expected },
      ready: { status: 200, ...expected },
    });
  });

  it('names the commit of its clone without it, or unknown outside a clone', async () => {
    const { release } = await named({});
    const { revision } = release.live;
    expect(release.metric).toEqual({ version: PACKAGE_VERSION, revision });
    expect(release.ready).toMatchObject({ version: PACKAGE_VERSION, revision });
    expect(release.startLine).toContain(`plant-store ${PACKAGE_VERSION} (${String(revision)})`);
    if (!isClone()) {
      expect(revision).toBe('unknown');
      return;
    }
    expect(revision).toMatch(/^[0-9a-f]{40}$/);
    // HEAD when it started: a commit made since leaves it an ancestor of HEAD.
    expect(() => git('merge-base', '--is-ancestor', String(revision), 'HEAD')).not.toThrow();
  });
});
