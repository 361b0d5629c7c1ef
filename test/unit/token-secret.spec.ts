import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseLifetime, parseOverlap } from '../../src/auth/token-lifetime.js';
import { TokenRequestError } from '../../src/auth/token-request.error.js';
import { generateTokenSecret, hashTokenSecret } from '../../src/auth/token-secret.js';

describe('token secrets', () => {
  it('carry 256 random bits behind a recognisable prefix', () => {
    const secret = generateTokenSecret();
    expect(secret).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice(4), 'base64url')).toHaveLength(32);
  });

  it('are never the same twice', () => {
    const secrets = new Set(Array.from({ length: 1000 }, generateTokenSecret));
    expect(secrets.size).toBe(1000);
  });

  it('are stored as their SHA-256, in hex', () => {
    const secret = 'pst_example';
    expect(hashTokenSecret(secret)).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(hashTokenSecret(secret)).not.toContain('example');
  });
});

describe('parseLifetime', () => {
  it.each([
    ['45s', 45_000],
    ['30m', 30 * 60_000],
    ['12h', 12 * 3_600_000],
    ['90d', 90 * 86_400_000],
  ])('reads %s', (text, ms) => {
    expect(parseLifetime(text)).toBe(ms);
  });

  it.each([['0d'], ['5y'], ['12'], ['-1h'], ['1.5h'], ['']])('refuses %j', (text) => {
    expect(() => parseLifetime(text)).toThrow(TokenRequestError);
  });
});

describe('parseOverlap', () => {
  it.each([
    ['0', 0],
    ['30s', 30_000],
    ['1h', 3_600_000],
    ['7d', 7 * 86_400_000],
  ])('reads %s', (text, ms) => {
    expect(parseOverlap(text)).toBe(ms);
  });

  it.each([['0s'], ['-1h'], ['1h30m'], ['']])('refuses %j', (text) => {
    expect(() => parseOverlap(text)).toThrow(TokenRequestError);
  });
});
