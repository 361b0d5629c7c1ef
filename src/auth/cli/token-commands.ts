import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ApiToken } from '../entities/api-token.entity.js';
import type { GrantableScopes } from '../scopes.js';
import { parseLifetime } from '../token-lifetime.js';
import type { TokensService } from '../tokens.service.js';

/** The CLI's help, naming the scopes the feature modules declare. */
export const tokenUsage = (scopes: GrantableScopes) => `Usage:
  token create --name NAME [--scopes ${scopes.defaults.join(',')}] [--expires-in 30m|12h|90d] [--replace]
      prints the new token, and only the token, on stdout (it is shown once);
      --scopes is a comma-separated list of ${scopes.all.join(', ')};
      --replace first revokes the live token with that name, if there is one
  token list [--json]
      shows id, name, scopes, expiry, last use and status (never the secret)
  token revoke NAME
      revokes the live token with that name`;

/** Where a command writes: the token or listing on `out`, everything else on `err`. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** `parseArgs` with its complaints turned into usage errors. */
function parseArguments<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs one token command; resolves to the process exit code. */
export async function runTokenCommand(
  argv: string[],
  tokens: TokensService,
  output: CommandOutput,
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
      const { secret } = await tokens.create({
        name: values.name,
        scopes: values.scopes
          ?.split(',')
          .map((scope) => scope.trim())
          .filter(Boolean),
        expiresInMs: expiresIn === undefined ? undefined : parseLifetime(expiresIn),
        replace: values.replace,
      });
      output.out(`${secret}\n`);
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
      if (!(await tokens.revoke(positionals[0]))) {
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
  const status = token.revokedAt
    ? 'revoked'
    : token.expiresAt && token.expiresAt <= now
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
