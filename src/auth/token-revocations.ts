/**
 * Revocations are announced on this PostgreSQL channel, with the token's secret hash as
 * the payload, so that every service process drops the token from its cache at once,
 * whichever process (the service or the token CLI) revoked it.
 */
export const TOKEN_REVOKED_CHANNEL = 'plant_store_token_revoked';

/**
 * Revokes the live token named $1 and announces it, in one statement: the announcement
 * is delivered when, and only if, the revocation commits.
 */
export const REVOKE_AND_ANNOUNCE = `
  WITH revoked AS (
    UPDATE api_tokens SET revoked_at = now()
    WHERE name = $1 AND revoked_at IS NULL
    RETURNING secret_hash
  )
  SELECT secret_hash, pg_notify('${TOKEN_REVOKED_CHANNEL}', secret_hash) FROM revoked`;
