import './compile-cache.js';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { APP_SCHEMA } from '../app.schema.js';
import { appendAuditEvent, managerQuery } from '../audit/audit-events.repository.js';
import { commandAuditLog } from '../audit/command-audit-log.js';
import { AppConfig, ConfigError } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source.js';
import { DatabaseServer } from '../database/database-server.js';
import { sealStoredSecrets } from '../webhooks/secrets/seal-stored-secrets.js';
import { reEncrypted } from '../webhooks/secrets/webhook-secrets-events.js';
import {
  SecretKeyError,
  WebhookSecretKeyring,
} from '../webhooks/secrets/webhook-secret-keyring.js';

const USAGE = `usage: npm run --silent webhook-secrets -- re-encrypt

  re-encrypt   encrypts every webhook signing secret under the first key of
               WEBHOOK_SECRET_KEYS (on the embedded database: of DATA_DIR/webhook-secret.key),
               and erases the clear copies the release before encryption kept; from then
               on no clear secret can be stored or signs. Run it after putting a new key
               first (the old one may then be removed), and once no replica of the release
               before encryption (1.0.0) runs any more.`;

class UsageError extends Error {}

/**
 * `npm run webhook-secrets -- re-encrypt`, straight on the database, whether or not the
 * service runs; in one transaction, so a replica reads every secret before or after it.
 */
async function main(argv: string[]): Promise<void> {
  if (argv.length !== 1 || argv[0] !== 're-encrypt') throw new UsageError(USAGE);
  const config = AppConfig.fromEnvironment();
  const keyring = WebhookSecretKeyring.load(config);
  const server = await DatabaseServer.connect(config);
  // The contract step adds a CHECK: the owner's work, when there is one.
  const dataSource = new DataSource(
    dataSourceOptions(server.migrationUrl ?? server.url, config, APP_SCHEMA),
  );
  try {
    await dataSource.initialize();
    // The record commits with the secrets it describes, or neither does.
    const { sealed, event } = await dataSource.transaction(async (manager) => {
      const done = await sealStoredSecrets(
        (sql, parameters) => manager.query(sql, parameters),
        () => keyring,
        { clearPlaintext: true },
      );
      return {
        sealed: done.sealed,
        event: await appendAuditEvent(
          managerQuery(manager),
          reEncrypted(keyring.currentKeyId, done),
        ),
      };
    });
    (await commandAuditLog(config))(event);
    process.stdout.write(
      `re-encrypted the secrets of ${sealed} webhook subscription(s) under key "${keyring.currentKeyId}"; no clear copy is left, and none can be stored again\n`,
    );
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await server.onApplicationShutdown();
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  const known = [UsageError, ConfigError, SecretKeyError].some((type) => error instanceof type);
  process.stderr.write(
    error instanceof UsageError ? `${message}\n` : `webhook-secrets: ${message}\n`,
  );
  process.exitCode = known ? 2 : 1;
}
