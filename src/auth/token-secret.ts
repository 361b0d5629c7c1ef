import { hash, randomBytes } from 'node:crypto';

const PREFIX = 'pst_';
/** 256 bits of randomness per token. */
const SECRET_BYTES = 32;

/** A new token as the client sends it: `pst_` and 43 base64url characters. */
export function generateTokenSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

/**
 * What is stored instead of the token. A 256-bit random secret cannot be guessed, so a
 * fast unsalted SHA-256 is enough and lets a token be found by its hash.
 */
export function hashTokenSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}
