/** A key that encrypts secrets at rest (AES-256-GCM), named so a ciphertext says which. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
export const SECRET_KEY_BYTES = 32;

export const SECRET_KEYS_FORMAT =
  'a comma-separated list of id:key, each id letters, digits, _ or - (at most 32) and each key 32 random bytes in base64 (openssl rand -base64 32), the ids all different';

/** `id:base64` with a key of exactly 32 bytes, or undefined. */
function parseEntry(entry: string): SecretKey | undefined {
  const separator = entry.indexOf(':');
  const id = entry.slice(0, separator);
  const encoded = entry.slice(separator + 1);
  if (separator < 0 || !KEY_ID.test(id) || !BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length === SECRET_KEY_BYTES ? { id, key } : undefined;
}

/**
 * `id:key,id:key…` (blanks and line breaks between entries ignored), the first the one that
 * encrypts; undefined when an entry is malformed or an id repeats.
 */
export function parseSecretKeys(value: string): SecretKey[] | undefined {
  const entries = value.split(/[\s,]+/).filter(Boolean);
  const keys = entries.map(parseEntry);
  if (keys.some((key) => key === undefined)) return undefined;
  const ids = new Set(keys.map((key) => key!.id));
  return ids.size === keys.length ? (keys as SecretKey[]) : undefined;
}
