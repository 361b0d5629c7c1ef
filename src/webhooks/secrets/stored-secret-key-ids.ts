import type { RunQuery } from './seal-stored-secrets.js';

/** Whether the schema has encrypted secrets yet (migration 1764300000001 adds them). */
const HAS_ENCRYPTED_SECRETS = `
  SELECT EXISTS (
    SELECT FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'webhook_subscriptions'
      AND column_name = 'secret_encrypted') AS encrypted`;

/** The key id of every ciphertext stored (`v1:<key id>:…`); secrets still in clear name none. */
const KEY_IDS = `
  SELECT DISTINCT split_part(sealed, ':', 2) AS id
  FROM (
    SELECT secret_encrypted AS sealed FROM webhook_subscriptions
    UNION ALL
    SELECT previous_secret FROM webhook_subscriptions
  ) AS stored
  WHERE sealed IS NOT NULL AND sealed NOT LIKE 'whsec\\_%'
  ORDER BY id`;

/**
 * The ids of the keys the stored webhook secrets are encrypted with, read in the caller's
 * transaction (a backup's snapshot, a restore's load): a database is of use only to a
 * service configured with each of them. Asks the catalog first rather than failing on a
 * schema from before encryption, which would abort the caller's transaction.
 */
export async function storedSecretKeyIds(query: RunQuery): Promise<string[]> {
  const [{ encrypted }] = (await query(HAS_ENCRYPTED_SECRETS)) as Array<{ encrypted: boolean }>;
  if (!encrypted) return [];
  return ((await query(KEY_IDS)) as Array<{ id: string }>).map(({ id }) => id);
}
