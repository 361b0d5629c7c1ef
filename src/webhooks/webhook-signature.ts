import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** 256 bits, as the Standard Webhooks specification recommends (24 to 64 bytes). */
const SECRET_BYTES = 32;

/** A new signing secret in the Standard Webhooks format: `whsec_` and base64 of the key. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The headers that let a receiver check who sent a delivery, and when (Standard Webhooks). */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs `body` as the Standard Webhooks specification says: HMAC-SHA256, keyed with each
 * secret's decoded bytes, of `${id}.${timestamp}.${body}`, sent as `v1,` and its base64.
 * Several secrets (the new one and, during a rotation's overlap, the previous one) give
 * several signatures, separated by spaces, of which a receiver needs one to match. The
 * timestamp is the attempt's, in seconds, so that receivers can refuse old replays.
 */
export function signDelivery(
  secrets: readonly string[],
  messageId: string,
  sentAt: Date,
  body: string,
): SignatureHeaders {
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  const signatures = secrets.map((secret) => {
    const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
    const signature = createHmac('sha256', key)
      .update(`${messageId}.${timestamp}.${body}`)
      .digest('base64');
    return `v1,${signature}`;
  });
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  };
}
