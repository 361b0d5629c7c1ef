import { parseArgs, type ParseArgsConfig } from 'node:util';
import { type Actor, cliActor } from '../../audit/actor.js';
import type { ApiToken } from '../entities/api-token.entity.js';
import type { GrantableScopes } from '../scopes.js';
import { parseLifetime, parseOverlap } from '../token-lifetime.js';
import type { TokensService } from '../tokens.service.js';

/**
 * How long a rotated token keeps working by default: a day to roll the new one out to
 * every client, as for a webhook secret. After a leak, rotate with --overlap 0.
 */
export const DEFAULT_OVERLAP = '24h';

/** The CLI's help, naming the scopes the feature modules declare. */
export const tokenUsage = (scopes: GrantableScopes) => `Usage:
  token create --name NAME [--scopes ${scopes.defaults.join(',')}] [--expires-in 30m|12h|90d] [--replace]
      prints the new token, and only the token, on stdout (it is shown once);
      --scopes is a comma-separated list of ${scopes.all.join(', ')};
      --replace first revokes the live token with that name, if there is one
  token rotate --name NAME [--overlap ${DEFAULT_OVERLAP}|1h|30s|0] [--expires-in 30m|12h|90d]
      prints a new token with the old one's scopes, which takes over the name; the old
      token keeps working until the overlap ends (${DEFAULT_OVERLAP} by default; 0: now), then is
      refused; the new token's lifetime is the old one's unless --expires-in says
  token list [--json]
      shows id, name, scopes, expiry, last use and status (never the secret): active,
      rotating (rotated, works until its expiry), rotated, expired or revoked
  token revoke NAME
      revokes the live token with that name, and one rotated whose overlap runs on
Each create, rotate and revoke is recorded in the audit trail, with your OS user, and
logged on stderr.`;

/** Where a command writes: the token or listing on `out`, everything else on `err`. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * `parseArgs` with its complaints turned into usage errors. A value that starts with a dash
 * (`--overlap -5s`) is taken as the value it was meant as, for the option's own check to
 * judge, rather than called ambiguous.
 */
function parseArguments<T extends ParseArgsConfig & { args: string[] }>(
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const takesValue = (arg: string) =>
    arg.startsWith('--') && config.options?.[arg.slice(2)]?.type === 'string';
  const args: string[] = [];
  for (let index = 0; index < config.args.length; index += 1) {
    const [arg, next] = [config.args[index], config.args[index + 1]];
    if (takesValue(arg) && next !== undefined && /^-[^-]/.test(next)) {
      args.push(`${arg}=${next}`);
      index += 1;
    } else args.push(arg);
  }
  try {
    return parseArgs({ ...config, args });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs one token command; resolves to the process exit code. */
export async function runTokenCommand(
  argv: string[],
  tokens: TokensService,
  output: CommandOutput,
  actor: Actor = cliActor(),
): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'create': {
      const { values } = parseArguments({
        args: rest,
        options: {
          name: { type: 'string' },
          scopes: { type: 'string' },
          'expires-in': { type: 'string' },
          replace: { type: 'boolean', default: false },
        },
      });
      if (!values.name) throw new UsageError('token create needs --name NAME');
      const expiresIn = values['expires-in'];
      const { secret } = await tokens.create(
        {
          name: values.name,
          scopes: values.scopes
            ?.split(',')
            .map((scope) => scope.trim())
            .filter(Boolean),
          expiresInMs: expiresIn === undefined ? undefined : parseLifetime(expiresIn),
          replace: values.replace,
        },
        actor,
      );
      output.out(`${secret}\n`);
      return 0;
    }
    case 'rotate': {
      const { values } = parseArguments({
        args: rest,
        options: {
          name: { type: 'string' },
          overlap: { type: 'string', default: DEFAULT_OVERLAP },
          'expires-in': { type: 'string' },
        },
      });
      if (!values.name) throw new UsageError('token rotate needs --name NAME');
      const expiresIn = values['expires-in'];
      const rotated = await tokens.rotate(
        {
          name: values.name,
          overlapMs: parseOverlap(values.overlap),
          expiresInMs: expiresIn === undefined ? undefined : parseLifetime(expiresIn),
        },
        actor,
      );
      if (!rotated) {
        output.err(`no live token named "${values.name}"\n`);
        return 1;
      }
      output.out(`${rotated.secret}\n`);
      output.err(
        `the old token "${values.name}" works until ${rotated.overlapEndsAt.toISOString()}\n`,
      );
      return 0;
    }
    case 'list': {
      const { values } = parseArguments({ args: rest, options: { json: { type: 'boolean' } } });
      const listed = await tokens.list();
      output.out(
        values.json ? `${JSON.stringify(listed.map(describe), null, 2)}\n` : table(listed),
      );
      return 0;
    }
    case 'revoke': {
      const { positionals } = parseArguments({ args: rest, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('token revoke needs exactly one NAME');
      if (!(await tokens.revoke(positionals[0], actor))) {
        output.err(`no live token named "${positionals[0]}"\n`);
        return 1;
      }
      output.err(`revoked token "${positionals[0]}"\n`);
      return 0;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'a command is needed');
  }
}

function describe(token: ApiToken) {
  const now = new Date();
  const ended = token.expiresAt !== null && token.expiresAt <= now;
  const status = token.revokedAt
    ? 'revoked'
    : token.rotatedAt
      ? ended
        ? 'rotated'
        : 'rotating'
      : ended
        ? 'expired'
        : 'active';
  return {
    id: token.id,
    name: token.name,
    scopes: token.scopes,
    expiresAt: token.expiresAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    status,
  };
}

function table(tokens: ApiToken[]): string {
  const rows = tokens
    .map(describe)
    .map((token) => [
      token.id,
      token.name,
      token.scopes.join(','),
      token.expiresAt ?? 'never',
      token.lastUsedAt ?? 'never',
      token.status,
    ]);
  const header = ['ID', 'NAME', 'SCOPES', 'EXPIRES', 'LAST USED', 'STATUS'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}
