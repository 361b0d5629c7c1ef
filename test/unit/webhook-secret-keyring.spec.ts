import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  SecretKeyError,
  WebhookSecretKeyring,
} from '../../src/webhooks/secrets/webhook-secret-keyring.js';
import { generateSigningSecret } from '../../src/webhooks/webhook-signature.js';

const key = (id: string) => ({ id, key: randomBytes(32) });

describe('WebhookSecretKeyring', () => {
  const secret = generateSigningSecret();

  it('encrypts under the first key, as v1:<key id>:<base64>, differently each time, and decrypts', () => {
    const keyring = new WebhookSecretKeyring([key('new'), key('old')]);
    const sealed = keyring.encrypt(secret);
    expect(sealed).toMatch(/^v1:new:[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain(secret.slice('whsec_'.length));
    expect(keyring.encrypt(secret)).not.toBe(sealed);
    expect(keyring.decrypt(sealed)).toBe(secret);
  });

  it('decrypts with any key it holds, so a new key can be put first', () => {
    const old = key('old');
    const sealed = new WebhookSecretKeyring([old]).encrypt(secret);
    expect(new WebhookSecretKeyring([key('new'), old]).decrypt(sealed)).toBe(secret);
  });

  it('refuses a ciphertext of a key it lacks, of another key under the same id, or altered', () => {
    const sealed = new WebhookSecretKeyring([key('k1')]).encrypt(secret);
    expect(() => new WebhookSecretKeyring([key('k2')]).decrypt(sealed)).toThrow(
      /encrypted with key "k1", which WEBHOOK_SECRET_KEYS lacks/,
    );
    expect(() => new WebhookSecretKeyring([key('k1')]).decrypt(sealed)).toThrow(
      /key "k1" does not decrypt/,
    );
    const keyring = new WebhookSecretKeyring([key('k1')]);
    const bytes = Buffer.from(keyring.encrypt(secret).split(':')[2], 'base64');
    bytes[20] ^= 1;
    expect(() => keyring.decrypt(`v1:k1:${bytes.toString('base64')}`)).toThrow(SecretKeyError);
    expect(() => keyring.decrypt(secret)).toThrow(/not in the v1 format/);
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
});
