import { execFileSync } from 'node:child_process';

/**
 * Whether Prometheus' promtool is here (Debian's `prometheus` package; `.ci/run` installs
 * it). In CI it must be: a test that needs it fails there rather than being skipped.
 */
export const PROMTOOL =
  Boolean(process.env.CI) ||
  (() => {
    try {
      execFileSync('promtool', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

/** `promtool ARGS`'s output; throws with it when promtool fails. */
export function promtool(args: string[]): string {
  try {
    return execFileSync('promtool', args, { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}
