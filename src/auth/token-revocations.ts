/**
 * Revocations and rotations are announced on this PostgreSQL channel, with the token's
 * secret hash as the payload, so that every service process drops the token from its
 * cache at once, whichever process (the service or the token CLI) changed it.
 */
export const TOKEN_REVOKED_CHANNEL = 'plant_store_token_revoked';

/**
 * Revokes the tokens named $1 that still work, in one statement with their announcement
 * (delivered when, and only if, the revocation commits): the live one, and one rotated
 * whose overlap has not ended.
 */
export const REVOKE_AND_ANNOUNCE = `
  WITH revoked AS (
    UPDATE api_tokens SET revoked_at = now()
    WHERE name = $1 AND revoked_at IS NULL AND (rotated_at IS NULL OR expires_at > now())
    RETURNING id, secret_hash
  )
  SELECT id, secret_hash, pg_notify('${TOKEN_REVOKED_CHANNEL}', secret_hash) FROM revoked`;

/**
 * Rotates the live token named $1, unexpired: it gives up its name and expires $2 ms
 * from now (or at its own expiry, if sooner), the end of the overlap. Announced like a
 * revocation, so that every process reloads it and, from then on, checks that expiry at
 * each request; its scopes and its lifetime (null: none) are the new token's.
 */
export const ROTATE_AND_ANNOUNCE = `
  WITH rotated AS (
    UPDATE api_tokens AS token
    SET rotated_at = now(),
        expires_at = least(token.expires_at, now() + $2::float8 * interval '1 millisecond')
    FROM api_tokens AS before
    WHERE before.id = token.id
      AND token.name = $1 AND token.revoked_at IS NULL AND token.rotated_at IS NULL
      AND (token.expires_at IS NULL OR token.expires_at > now())
    RETURNING token.id, token.secret_hash, token.scopes, token.expires_at,
              (extract(epoch FROM before.expires_at - token.created_at) * 1000)::float8
                AS lifetime_ms
  )
  SELECT id, scopes, expires_at, lifetime_ms, pg_notify('${TOKEN_REVOKED_CHANNEL}', secret_hash)
  FROM rotated`;
