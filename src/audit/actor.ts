import { userInfo } from 'node:os';

/** Who made a change: the bearer token of an HTTP request, or a person at the CLI. */
export type Actor =
  { kind: 'token'; tokenId: string; tokenName: string } | { kind: 'cli'; user: string };

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
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = env.USER || env.LOGNAME || `uid ${process.getuid?.() ?? 'unknown'}`;
  }
  return { kind: 'cli', user };
}

/** The actor as the trail writes it: `token:<name>` or `cli:<OS user>`. */
export function describeActor(actor: Actor): string {
  return actor.kind === 'token' ? `token:${actor.tokenName}` : `cli:${actor.user}`;
}
