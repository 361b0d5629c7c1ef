import type { WebhookSecretKeyring } from './webhook-secret-keyring.js';

/** A statement run in the caller's transaction: a migration's, or the CLI's. */
export type RunQuery = (sql: string, parameters?: unknown[]) => Promise<unknown>;

interface StoredSecrets {
  id: string;
  secret: string | null;
  secret_encrypted: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  overlap_ended: boolean;
}

const PLAINTEXT_PREFIX = 'whsec_';

/**
 * The constraint the contract step adds once it has erased every clear secret: from then
 * on none can be stored, and none signs (WebhookSecretsCheck reads it at start).
 */
export const CLEAR_SECRETS_RETIRED = 'webhook_subscriptions_clear_secret_retired';

/** Whether the contract step has retired clear secrets already. */
const CLEAR_SECRETS_RETIRED_ALREADY = `
  SELECT EXISTS (
    SELECT FROM pg_constraint WHERE conname = '${CLEAR_SECRETS_RETIRED}'
      AND conrelid = 'webhook_subscriptions'::regclass
  ) AS retired`;

/**
 * Retires clear secrets for good, in the contract step's transaction. The table is small
 * (one row per receiver), so validating it holds its lock for a moment; a delivery claim
 * holding the table makes it wait at most the lock time-out, then fail with nothing done.
 */
const RETIRE_CLEAR_SECRETS = `
  DO $$ BEGIN
    SET LOCAL lock_timeout = '5s';
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = '${CLEAR_SECRETS_RETIRED}'
                   AND conrelid = 'webhook_subscriptions'::regclass) THEN
      ALTER TABLE webhook_subscriptions
        ADD CONSTRAINT ${CLEAR_SECRETS_RETIRED} CHECK (secret IS NULL);
    END IF;
  END $$`;

/** Every subscription's secrets, locked until the caller's transaction ends. */
const STORED = `
  SELECT id, secret, secret_encrypted, previous_secret, previous_secret_expires_at,
         coalesce(previous_secret_expires_at <= now(), true) AS overlap_ended
  FROM webhook_subscriptions
  ORDER BY id FOR UPDATE`;

/**
 * One subscription's secrets, encrypted anew, the previous one with the end it is bound to
 * ($5, to the millisecond; both null once its overlap has ended); with $4, the clear copy
 * that the release before encryption signs with is erased.
 */
const SEAL = `
  UPDATE webhook_subscriptions
  SET secret_encrypted = $2, previous_secret = $3, previous_secret_expires_at = $5,
      secret = CASE WHEN $4::boolean THEN NULL ELSE secret END
  WHERE id = $1`;

/** What sealStoredSecrets did. */
export interface SealedSecrets {
  /** Subscriptions whose secrets were encrypted anew. */
  sealed: number;
  /** Clear secrets erased (with `clearPlaintext`). */
  clearErased: number;
  /** Whether this run added the constraint that retires clear secrets. */
  clearSecretsRetired: boolean;
}

/**
 * Encrypts every subscription's secrets under the keyring's first key, each bound to its
 * subscription and column (a previous secret also to its end): those stored in clear (by
 * the release before encryption, or by the first rotations), those of the format bound to
 * their purpose only (v1), and those encrypted under any key the keyring holds.
 * `clearPlaintext` erases the clear `secret` column, which only the release before
 * encryption reads, and retires clear secrets for good (the contract step). `keyring` is
 * asked for only when there is something to encrypt.
 */
export async function sealStoredSecrets(
  query: RunQuery,
  keyring: () => WebhookSecretKeyring,
  { clearPlaintext }: { clearPlaintext: boolean },
): Promise<SealedSecrets> {
  const rows = (await query(STORED)) as StoredSecrets[];
  for (const row of rows) {
    const keys = keyring();
    const current = { subscriptionId: row.id, column: 'secret_encrypted' } as const;
    const previous = {
      subscriptionId: row.id,
      column: 'previous_secret',
      expiresAt: row.previous_secret_expires_at,
    } as const;
    const open = (stored: string, place: typeof current | typeof previous) =>
      stored.startsWith(PLAINTEXT_PREFIX) ? stored : keys.decryptToReseal(stored, place);
    const secret =
      row.secret_encrypted === null ? row.secret! : open(row.secret_encrypted, current);
    const previousSecret =
      row.previous_secret === null || row.overlap_ended
        ? null
        : open(row.previous_secret, previous);
    await query(SEAL, [
      row.id,
      keys.encrypt(secret, current),
      previousSecret === null ? null : keys.encrypt(previousSecret, previous),
      clearPlaintext,
      previousSecret === null ? null : row.previous_secret_expires_at,
    ]);
  }
  const sealed = rows.length;
  if (!clearPlaintext) return { sealed, clearErased: 0, clearSecretsRetired: false };
  const [{ retired }] = (await query(CLEAR_SECRETS_RETIRED_ALREADY)) as { retired: boolean }[];
  await query(RETIRE_CLEAR_SECRETS);
  const clearErased = rows.filter(({ secret }) => secret !== null).length;
  return { sealed, clearErased, clearSecretsRetired: !retired };
}
