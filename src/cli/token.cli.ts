import './compile-cache.js';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { APP_SCOPES } from '../app.scopes.js';
import { runTokenCommand, tokenUsage, UsageError } from '../auth/cli/token-commands.js';
import { TokenRequestError } from '../auth/token-request.error.js';
import { TokensService } from '../auth/tokens.service.js';
import { ConfigError } from '../config/app-config.js';
import { StderrConsoleLogger } from '../logging/stderr-console-logger.js';
import { TokenCliModule } from './token-cli.module.js';

/**
 * `npm run --silent token -- …`: manages bearer tokens straight in the database, so it
 * works whether or not the service runs (on the embedded database it joins the running
 * server, or starts and stops one itself).
 */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stderr.write(`${tokenUsage(APP_SCOPES)}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  // Standard output is the answer: what the modules log while starting, such as the
  // database role's warning, goes to standard error.
  const app = await NestFactory.createApplicationContext(TokenCliModule, {
    logger: new StderrConsoleLogger({ logLevels: ['error', 'warn'] }),
  });
  try {
    return await runTokenCommand(argv, app.get(TokensService), {
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
  } finally {
    await app.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const known = [UsageError, TokenRequestError, ConfigError].some((type) => error instanceof type);
  const message = error instanceof Error ? error.message : String(error);
  const usage = error instanceof UsageError ? `${tokenUsage(APP_SCOPES)}\n` : '';
  process.stderr.write(known ? `token: ${message}\n${usage}` : `token: failed: ${message}\n`);
  process.exitCode = known ? 2 : 1;
}
