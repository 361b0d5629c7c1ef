import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { ConcurrencyLimit } from '../common/concurrency/concurrency-limit.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { retryRefused } from '../database/retry-refused.js';
import { ApiToken } from './entities/api-token.entity.js';
import type { Principal } from './principal.js';
import { GrantableScopes, type Scope } from './scopes.js';
import { TokenRequestError } from './token-request.error.js';
import { REVOKE_AND_ANNOUNCE } from './token-revocations.js';
import { generateTokenSecret, hashTokenSecret } from './token-secret.js';
import { VerifiedTokenCache } from './verified-token-cache.js';
import { tracing } from '../common/tracing/tracing.js';

const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Recording every use would be a write per request; once a minute is enough to tell. */
const LAST_USED_RESOLUTION_MS = 60_000;
/**
 * Token lookups use at most this many of the pool's connections at once (of
 * DATABASE_POOL_SIZE, at least 4), so that a flood of unknown tokens (each new one costs
 * a lookup) queues here, in memory, and never starves the requests of clients already
 * verified, nor the readiness check. A token known to be valid (its cache entry is being
 * reloaded, or expired) goes ahead of that queue.
 */
const CONCURRENT_TOKEN_LOOKUPS = 2;

export interface NewToken {
  name: string;
  /** Absent: the scopes granted by default. */
  scopes?: string[];
  /** Lifetime in milliseconds; absent: the token does not expire. */
  expiresInMs?: number;
  /**
   * Revokes the live token with this name, if there is one, in the same transaction:
   * the name never has two live tokens, and the old one is revoked only if the new one
   * is issued.
   */
  replace?: boolean;
}

export interface IssuedToken {
  /** The bearer token itself: shown once, never stored. */
  secret: string;
  token: ApiToken;
}

/** The token store: issue, list, revoke, and authenticate a presented bearer token. */
@Injectable()
export class TokensService {
  private readonly logger = new Logger(TokensService.name);
  private readonly lookups = new ConcurrencyLimit(CONCURRENT_TOKEN_LOOKUPS);

  constructor(
    @InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>,
    private readonly verified: VerifiedTokenCache<ApiToken>,
    private readonly grantable: GrantableScopes,
  ) {}

  async create({
    name,
    scopes = this.grantable.defaults,
    expiresInMs,
    replace = false,
  }: NewToken): Promise<IssuedToken> {
    if (!TOKEN_NAME.test(name)) {
      throw new TokenRequestError(
        `invalid token name "${name}": use 1 to 100 letters, digits, ".", "_" or "-"`,
      );
    }
    const unknown = scopes.filter((scope) => !this.grantable.includes(scope));
    if (scopes.length === 0 || unknown.length > 0) {
      throw new TokenRequestError(
        `invalid scopes "${scopes.join(',')}": use one or more of ${this.grantable.all.join(', ')}`,
      );
    }
    const secret = generateTokenSecret();
    const token = this.tokens.create({
      name,
      secretHash: hashTokenSecret(secret),
      scopes: [...new Set(scopes)],
      expiresAt: expiresInMs === undefined ? null : new Date(Date.now() + expiresInMs),
    });
    try {
      const saved = await retryRefused(() =>
        this.tokens.manager.transaction(async (manager) => {
          if (replace) await this.revokeWith(manager, name);
          return manager.save(token);
        }),
      );
      return { secret, token: saved };
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new TokenRequestError(
          `a token named "${name}" already exists; revoke it first, or replace it (--replace)`,
        );
      }
      throw error;
    }
  }

  list(): Promise<ApiToken[]> {
    return this.tokens.find({ order: { createdAt: 'ASC' } });
  }

  /**
   * Revokes the live token with this name; false when there is none. Every service
   * process hears of it through PostgreSQL and stops accepting the token at once.
   */
  revoke(name: string): Promise<boolean> {
    return this.revokeWith(this.tokens.manager, name);
  }

  private async revokeWith(manager: EntityManager, name: string): Promise<boolean> {
    const revoked: { secret_hash: string }[] = await manager.query(REVOKE_AND_ANNOUNCE, [name]);
    // This process need not wait for its own announcement to come back.
    for (const { secret_hash } of revoked) this.verified.evict(secret_hash);
    return revoked.length > 0;
  }

  /** The principal for a presented token, or null when it is unknown, expired or revoked. */
  async authenticate(secret: string): Promise<Principal | null> {
    const secretHash = hashTokenSecret(secret);
    let cache = 'hit';
    const token = await this.verified.get(secretHash, (known) => {
      cache = 'miss';
      return this.lookups.run(() => this.tokens.findOneBy({ secretHash }), known);
    });
    tracing().annotate({ 'plant_store.token.cache': cache });
    const now = new Date();
    if (!token || token.revokedAt || (token.expiresAt && token.expiresAt <= now)) return null;
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Also marks the cached token, so that the next requests do not record it again.
      token.lastUsedAt = now;
      this.tokens
        .update({ id: token.id }, { lastUsedAt: now })
        .catch((error: Error) => this.logger.warn(`could not record token use: ${error.message}`));
    }
    return { tokenId: token.id, tokenName: token.name, scopes: token.scopes as Scope[] };
  }
}
