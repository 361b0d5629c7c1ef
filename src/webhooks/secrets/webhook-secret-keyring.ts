import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../../config/app-config.js';
import { parseSecretKeys, SECRET_KEY_BYTES, type SecretKey } from '../../config/secret-keys.js';

/** The embedded database's own key, beside its data (<DATA_DIR>/postgres). */
const EMBEDDED_KEY_FILE = 'webhook-secret.key';
/** The embedded key's id in its file and in every ciphertext it makes. */
const EMBEDDED_KEY_ID = 'embedded';
/**
 * The ciphertext format: `v2:<key id>:<base64 of IV (12 bytes), ciphertext, tag (16)>`,
 * bound to its place (see SecretPlace). v1, the same bound only to its purpose, is opened
 * only to be sealed again as v2 (the migration and `webhook-secrets re-encrypt`).
 */
const VERSION = 'v2';
const UNBOUND_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** v1's associated data: its purpose alone. */
const UNBOUND_ASSOCIATED_DATA = Buffer.from('plant-store webhook signing secret');

/**
 * Where a sealed secret is stored, authenticated with it as associated data: a ciphertext
 * copied to another subscription or column, or a previous secret whose end was moved, no
 * longer opens, so it cannot sign.
 */
export interface SecretPlace {
  subscriptionId: string;
  column: 'secret_encrypted' | 'previous_secret';
  /** A previous secret's: when it stops signing (millisecond precision). */
  expiresAt?: Date | null;
}

function associatedData({ subscriptionId, column, expiresAt }: SecretPlace): Buffer {
  return Buffer.from(
    [
      'plant-store webhook signing secret',
      subscriptionId,
      column,
      expiresAt?.toISOString() ?? '',
    ].join('\n'),
  );
}

/** No key where one is needed, or a ciphertext no key given opens (unknown id, wrong key, damaged). */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/**
 * The keys webhook signing secrets are encrypted with at rest (AES-256-GCM): the first
 * encrypts, every one decrypts, so that a new key can be put first while the secrets
 * sealed with the old one are still read, until `webhook-secrets re-encrypt` has moved
 * them all.
 */
export class WebhookSecretKeyring {
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(private readonly keys: readonly SecretKey[]) {
    if (keys.length === 0) throw new SecretKeyError('a keyring needs a key');
    this.byId = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /** The id of the key that encrypts. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  /** Every key's id, in order, the one that encrypts first: never a key. */
  get keyIds(): string[] {
    return this.keys.map(({ id }) => id);
  }

  /**
   * A key of each for another purpose, named by `purpose` (HKDF-SHA256, RFC 5869), under
   * the same ids and in the same order: what one of them gives away says nothing of the
   * keys that encrypt secrets, nor of another purpose's.
   */
  derive(purpose: string): SecretKey[] {
    return this.keys.map(({ id, key }) => ({
      id,
      key: Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), purpose, SECRET_KEY_BYTES)),
    }));
  }

  encrypt(secret: string, place: SecretPlace): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(associatedData(place));
    const sealed = Buffer.concat([
      iv,
      cipher.update(secret, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${VERSION}:${id}:${sealed.toString('base64')}`;
  }

  /**
   * @throws SecretKeyError when no key given opens it, or it was sealed for another place.
   */
  decrypt(ciphertext: string, place: SecretPlace): string {
    return this.open(ciphertext, VERSION, associatedData(place));
  }

  /**
   * A secret sealed in either format, to be sealed again: v1 (bound to its purpose only,
   * as this release's predecessor wrote it) or v2 at `place`.
   */
  decryptToReseal(ciphertext: string, place: SecretPlace): string {
    return ciphertext.startsWith(`${UNBOUND_VERSION}:`)
      ? this.open(ciphertext, UNBOUND_VERSION, UNBOUND_ASSOCIATED_DATA)
      : this.decrypt(ciphertext, place);
  }

  private open(ciphertext: string, expectedVersion: string, associated: Buffer): string {
    const [version, id, encoded, ...rest] = ciphertext.split(':');
    if (version !== expectedVersion || encoded === undefined || rest.length > 0) {
      throw new SecretKeyError(
        version === UNBOUND_VERSION
          ? 'a stored webhook secret is in the v1 format, not bound to its subscription: run npm run migration:run'
          : `a stored webhook secret is not in the ${expectedVersion} format`,
      );
    }
    const key = this.byId.get(id);
    if (!key) {
      throw new SecretKeyError(
        `a webhook secret is encrypted with key "${id}", which WEBHOOK_SECRET_KEYS lacks`,
      );
    }
    const sealed = Buffer.from(encoded, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES))
        .setAAD(associated)
        .setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretKeyError(
        `key "${id}" does not decrypt a webhook secret encrypted with it: it is not the key it was encrypted with, or the secret was moved from its subscription or its overlap changed`,
      );
    }
  }

  /**
   * WEBHOOK_SECRET_KEYS when set. Otherwise, on the embedded database, the key in
   * <DATA_DIR>/webhook-secret.key, made (0600) the first time; on a server (DATABASE_URL),
   * a SecretKeyError: replicas must share a key, which none can make for the others.
   */
  static load(
    config: Pick<AppConfig, 'webhookSecretKeys' | 'databaseUrl' | 'dataDir'>,
  ): WebhookSecretKeyring {
    if (config.webhookSecretKeys.length > 0)
      return new WebhookSecretKeyring(config.webhookSecretKeys);
    if (config.databaseUrl !== undefined) {
      throw new SecretKeyError(
        'WEBHOOK_SECRET_KEYS is not set: with DATABASE_URL, every replica needs the key that webhook secrets are encrypted with (id:key, the key 32 random bytes in base64: openssl rand -base64 32)',
      );
    }
    return new WebhookSecretKeyring(readOrCreateKeyFile(config.dataDir));
  }
}

/**
 * Written whole or not at all (a draft linked into place): a process that finds the file
 * reads a complete key, even while another one is creating it. A file that others than its
 * owner may read is refused: the key would then be no more secret than the directory.
 */
function readOrCreateKeyFile(dataDir: string): SecretKey[] {
  const file = join(dataDir, EMBEDDED_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const draft = `${file}.${process.pid}`;
    rmSync(draft, { force: true });
    const key = randomBytes(SECRET_KEY_BYTES).toString('base64');
    writeFileSync(draft, `${EMBEDDED_KEY_ID}:${key}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    unlinkSync(draft);
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new SecretKeyError(
      `${file} is open to group or others (mode ${mode.toString(8).padStart(4, '0')}): make it readable by its owner alone (chmod 600)`,
    );
  }
  const keys = parseSecretKeys(readFileSync(file, 'utf8'));
  if (!keys?.length) {
    throw new SecretKeyError(`${file} does not hold id:key entries (32-byte keys in base64)`);
  }
  return keys;
}
