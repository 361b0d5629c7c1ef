import { createHmac, type Hmac, timingSafeEqual } from 'node:crypto';
import type { SecretKey } from '../../config/secret-keys.js';

/** HKDF's purpose for the keys backups are signed with, derived from WEBHOOK_SECRET_KEYS. */
export const BACKUP_SIGNING_PURPOSE = 'plant-store backup HMAC-SHA256';
export const BACKUP_SIGNATURE_ALGORITHM = 'HMAC-SHA256';

/** Named in a backup's header: the key whose HMAC its last line holds. */
export interface BackupSignature {
  algorithm: typeof BACKUP_SIGNATURE_ALGORITHM;
  keyId: string;
}

/** What a backup needs of the keys: sign, verify, and know which ciphertexts are of use. */
export interface BackupKeys {
  /**
   * HMAC keys by id (BACKUP_SIGNING_PURPOSE), in WEBHOOK_SECRET_KEYS' order: the first
   * signs, each verifies what it signed, so that backups made before a key rotation are
   * still verified while the old key is listed.
   */
  signing: readonly SecretKey[];
  /** The ids of the keys the database's stored secrets are encrypted with (its ciphertexts). */
  idsInUse(query: (sql: string) => Promise<unknown>): Promise<string[]>;
}

/** The HMAC-SHA256 of every byte of a backup before its last line, under one key. */
export class BackupMac {
  private readonly hmac: Hmac;

  constructor(key: SecretKey) {
    this.hmac = createHmac('sha256', key.key);
  }

  update(bytes: Buffer | string): void {
    this.hmac.update(bytes);
  }

  /** The last line of a signed backup. */
  trailerLine(): string {
    return `${JSON.stringify({ hmac: this.hmac.digest('base64') })}\n`;
  }

  /** Whether `trailer`, a backup's last line (without its newline), holds this HMAC. */
  matches(trailer: string): boolean {
    let claimed: Buffer;
    try {
      const { hmac } = JSON.parse(trailer) as { hmac?: unknown };
      if (typeof hmac !== 'string') return false;
      claimed = Buffer.from(hmac, 'base64');
    } catch {
      return false;
    }
    const actual = this.hmac.digest();
    return claimed.length === actual.length && timingSafeEqual(claimed, actual);
  }
}
