import { cliActor, serviceActor } from '../../audit/actor.js';
import type { AuditRecord } from '../../audit/audit-record.js';
import type { SealedSecrets } from './seal-stored-secrets.js';

/** The subject of `webhook_secrets.re_encrypted`: the secrets stored with the subscriptions. */
const STORED_SECRETS = 'webhook_subscriptions';
/** The subject of `webhook_secrets.keys_changed`: the configured keys. */
export const CONFIGURED_KEYS = 'WEBHOOK_SECRET_KEYS';

/** `webhook-secrets re-encrypt`, in its own transaction: under which key, and what it did. */
export function reEncrypted(keyId: string, sealed: SealedSecrets): AuditRecord {
  return {
    event: 'webhook_secrets.re_encrypted',
    subjectId: STORED_SECRETS,
    actor: cliActor(),
    details: {
      keyId,
      reEncrypted: sealed.sealed,
      clearSecretsErased: sealed.clearErased,
      clearSecretsRetired: sealed.clearSecretsRetired,
    },
  };
}

/**
 * `webhook_secrets.keys_changed` when the key ids a process starts with differ from the
 * latest recorded (ids only, in order: never a key); the first ids of a trail that holds
 * rows, with `previousKeyIds` null. Nothing on an empty trail: a new database stays empty,
 * for a restore, until something is done to it.
 */
export function keysChanged(
  keyIds: string[],
  latest: Record<string, unknown> | undefined,
  trail: { empty: boolean },
): AuditRecord | undefined {
  const previousKeyIds = (latest?.keyIds as string[] | undefined) ?? null;
  if (trail.empty || previousKeyIds?.join(',') === keyIds.join(',')) return undefined;
  return {
    event: 'webhook_secrets.keys_changed',
    subjectId: CONFIGURED_KEYS,
    actor: serviceActor(),
    details: { previousKeyIds, keyIds },
  };
}
