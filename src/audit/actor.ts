import { userInfo } from 'node:os';

/**
 * Who made a change: the bearer token of an HTTP request, a person at the CLI, or the
 * service itself at its start (what it was started with).
 */
export type Actor =
  { kind: 'token'; tokenId: string; tokenName: string } | { kind: 'cli' | 'service'; user: string };

/** The token an HTTP request was authenticated with. */
export function tokenActor({ tokenId, tokenName }: { tokenId: string; tokenName: string }): Actor {
  return { kind: 'token', tokenId, tokenName };
}

/**
 * The person running the CLI: the OS account of the process (its uid's name), else, where
 * the uid has no entry in the passwd file (as in some containers), what the login
 * environment says, else the uid itself.
 */
export function cliActor(env: NodeJS.ProcessEnv = process.env): Actor {
  return { kind: 'cli', user: osUser(env) };
}

/** The service, at its start: the OS account it runs as, found as cliActor finds it. */
export function serviceActor(env: NodeJS.ProcessEnv = process.env): Actor {
  return { kind: 'service', user: osUser(env) };
}

function osUser(env: NodeJS.ProcessEnv): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER || env.LOGNAME || `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

/** The actor as the trail writes it: `token:<name>`, `cli:<OS user>` or `service:<OS user>`. */
export function describeActor(actor: Actor): string {
  return actor.kind === 'token' ? `token:${actor.tokenName}` : `${actor.kind}:${actor.user}`;
}
