import type { WebhookSecretKeyring } from './webhook-secret-keyring.js';

/** A statement run in the caller's transaction: a migration's, or the CLI's. */
export type RunQuery = (sql: string, parameters?: unknown[]) => Promise<unknown>;

interface StoredSecrets {
  id: string;
  secret: string | null;
  secret_encrypted: string | null;
  previous_secret: string | null;
}

const PLAINTEXT_PREFIX = 'whsec_';

/** Every subscription's secrets, locked until the caller's transaction ends. */
const STORED = `
  SELECT id, secret, secret_encrypted, previous_secret FROM webhook_subscriptions
  ORDER BY id FOR UPDATE`;

/**
 * One subscription's secrets, encrypted anew; with $4, the clear copy that the release
 * before encryption signs with is erased.
 */
const SEAL = `
  UPDATE webhook_subscriptions
  SET secret_encrypted = $2, previous_secret = $3,
      secret = CASE WHEN $4::boolean THEN NULL ELSE secret END
  WHERE id = $1`;

/**
 * Encrypts every subscription's secrets under the keyring's first key: those stored in
 * clear (by the release before encryption, or by the first rotations) and those encrypted
 * under any key the keyring holds. `clearPlaintext` erases the clear `secret` column,
 * which only the release before encryption reads (the contract step). `keyring` is asked
 * for only when there is something to encrypt. Answers how many subscriptions it sealed.
 */
export async function sealStoredSecrets(
  query: RunQuery,
  keyring: () => WebhookSecretKeyring,
  { clearPlaintext }: { clearPlaintext: boolean },
): Promise<number> {
  const rows = (await query(STORED)) as StoredSecrets[];
  for (const row of rows) {
    const keys = keyring();
    const open = (stored: string) =>
      stored.startsWith(PLAINTEXT_PREFIX) ? stored : keys.decrypt(stored);
    const current = row.secret_encrypted === null ? row.secret! : open(row.secret_encrypted);
    const previous = row.previous_secret === null ? null : open(row.previous_secret);
    await query(SEAL, [
      row.id,
      keys.encrypt(current),
      previous === null ? null : keys.encrypt(previous),
      clearPlaintext,
    ]);
  }
  return rows.length;
}
