import { createCipheriv, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type SecretPlace,
  SecretKeyError,
  WebhookSecretKeyring,
} from '../../src/webhooks/secrets/webhook-secret-keyring.js';
import { generateSigningSecret } from '../../src/webhooks/webhook-signature.js';

const key = (id: string) => ({ id, key: randomBytes(32) });
const current = (subscriptionId: string): SecretPlace => ({
  subscriptionId,
  column: 'secret_encrypted',
});
const A = current('6f1b2c3d-0000-4000-8000-00000000000a');
const B = current('6f1b2c3d-0000-4000-8000-00000000000b');

/** What the release before this one wrote: v1, bound only to its purpose. */
function sealedAsV1({ id, key: bytes }: { id: string; key: Buffer }, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', bytes, iv).setAAD(
    Buffer.from('plant-store webhook signing secret'),
  );
  const sealed = Buffer.concat([iv, cipher.update(secret), cipher.final(), cipher.getAuthTag()]);
  return `v1:${id}:${sealed.toString('base64')}`;
}

describe('WebhookSecretKeyring', () => {
  const secret = generateSigningSecret();

  it('encrypts under the first key, as v2:<key id>:<base64>, differently each time, and decrypts at the same place', () => {
    const keyring = new WebhookSecretKeyring([key('new'), key('old')]);
    const sealed = keyring.encrypt(secret, A);
    expect(sealed).toMatch(/^v2:new:[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain(secret.slice('whsec_'.length));
    expect(keyring.encrypt(secret, A)).not.toBe(sealed);
    expect(keyring.decrypt(sealed, A)).toBe(secret);
  });

  it('decrypts with any key it holds, so a new key can be put first', () => {
    const old = key('old');
    const sealed = new WebhookSecretKeyring([old]).encrypt(secret, A);
    expect(new WebhookSecretKeyring([key('new'), old]).decrypt(sealed, A)).toBe(secret);
  });

  it('refuses a ciphertext moved to another subscription, to the other column, or a previous secret whose end moved', () => {
    const keyring = new WebhookSecretKeyring([key('k1')]);
    expect(() => keyring.decrypt(keyring.encrypt(secret, A), B)).toThrow(
      /moved from its subscription or its overlap changed/,
    );
    const previous: SecretPlace = { ...A, column: 'previous_secret', expiresAt: new Date(1e12) };
    const sealedPrevious = keyring.encrypt(secret, previous);
    expect(keyring.decrypt(sealedPrevious, previous)).toBe(secret);
    expect(() => keyring.decrypt(sealedPrevious, A)).toThrow(SecretKeyError);
    expect(() =>
      keyring.decrypt(sealedPrevious, { ...previous, expiresAt: new Date(1e12 + 86_400_000) }),
    ).toThrow(SecretKeyError);
  });

  it('opens the v1 format only to seal it again', () => {
    const k1 = key('k1');
    const keyring = new WebhookSecretKeyring([k1]);
    const legacy = sealedAsV1(k1, secret);
    expect(() => keyring.decrypt(legacy, A)).toThrow(/v1 format, not bound to its subscription/);
    expect(keyring.decryptToReseal(legacy, A)).toBe(secret);
    expect(keyring.decryptToReseal(keyring.encrypt(secret, A), A)).toBe(secret);
  });

  it('refuses a ciphertext of a key it lacks, of another key under the same id, or altered', () => {
    const sealed = new WebhookSecretKeyring([key('k1')]).encrypt(secret, A);
    expect(() => new WebhookSecretKeyring([key('k2')]).decrypt(sealed, A)).toThrow(
      /encrypted with key "k1", which WEBHOOK_SECRET_KEYS lacks/,
    );
    expect(() => new WebhookSecretKeyring([key('k1')]).decrypt(sealed, A)).toThrow(
      /key "k1" does not decrypt/,
    );
    const keyring = new WebhookSecretKeyring([key('k1')]);
    const bytes = Buffer.from(keyring.encrypt(secret, A).split(':')[2], 'base64');
    bytes[20] ^= 1;
    expect(() => keyring.decrypt(`v2:k1:${bytes.toString('base64')}`, A)).toThrow(SecretKeyError);
    expect(() => keyring.decrypt(secret, A)).toThrow(/not in the v2 format/);
  });

  it('needs WEBHOOK_SECRET_KEYS with a database server', () => {
    expect(() =>
      WebhookSecretKeyring.load({
        webhookSecretKeys: [],
        databaseUrl: 'postgres://db/plants',
        dataDir: '/nonexistent',
      }),
    ).toThrow(/WEBHOOK_SECRET_KEYS is not set/);
  });

  it("makes the embedded database's key file 0600, and refuses one open to group or others", () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'keyring-'));
    try {
      const config = { webhookSecretKeys: [], databaseUrl: undefined, dataDir };
      const made = WebhookSecretKeyring.load(config);
      expect(WebhookSecretKeyring.load(config).currentKeyId).toBe(made.currentKeyId);
      const file = join(dataDir, 'webhook-secret.key');
      for (const mode of [0o640, 0o604, 0o620]) {
        chmodSync(file, mode);
        expect(() => WebhookSecretKeyring.load(config)).toThrow(
          `${file} is open to group or others (mode 0${mode.toString(8)}): make it readable by its owner alone (chmod 600)`,
        );
      }
      writeFileSync(file, `embedded:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
      chmodSync(file, 0o400);
      expect(WebhookSecretKeyring.load(config).currentKeyId).toBe('embedded');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
