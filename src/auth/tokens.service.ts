import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { Actor } from '../audit/actor.js';
import { AuditTrail, type RecordEvent } from '../audit/audit-trail.js';
import { ConcurrencyLimit } from '../common/concurrency/concurrency-limit.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { retryRefused } from '../database/retry-refused.js';
import { ApiToken } from './entities/api-token.entity.js';
import type { Principal } from './principal.js';
import { GrantableScopes, type Scope } from './scopes.js';
import { TokenRequestError } from './token-request.error.js';
import { REVOKE_AND_ANNOUNCE, ROTATE_AND_ANNOUNCE } from './token-revocations.js';
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

export interface TokenRotation {
  /** The live token to rotate. */
  name: string;
  /** How long the old token keeps working; 0: it is refused at once. */
  overlapMs: number;
  /** The new token's lifetime; absent: the old one's (none, if it had none). */
  expiresInMs?: number;
}

export interface RotatedToken extends IssuedToken {
  /** When the old token stops working. */
  overlapEndsAt: Date;
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
    private readonly audit: AuditTrail,
  ) {}

  async create(
    { name, scopes = this.grantable.defaults, expiresInMs, replace = false }: NewToken,
    actor: Actor,
  ): Promise<IssuedToken> {
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
    const expiresAt = expiresInMs === undefined ? null : new Date(Date.now() + expiresInMs);
    try {
      return await retryRefused(() =>
        this.audit.transaction(async (manager, record) => {
          const replaced = replace ? await this.revokeWith(manager, record, name, actor) : [];
          return this.issue(
            manager,
            record,
            actor,
            { name, scopes, expiresAt },
            replace ? { replaced } : {},
          );
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new TokenRequestError(
          `a token named "${name}" already exists; revoke it first, or replace it (--replace)`,
        );
      }
      throw error;
    }
  }

  /**
   * Gives the live token named `name` a successor with its scopes, and lets the old one
   * work until the overlap ends (never past its own expiry). From then on every process
   * refuses it, as it refuses a revoked token: the expiry is checked at each request, also
   * of a token it holds in its cache. Null when there is no live, unexpired token so named.
   */
  async rotate(
    { name, overlapMs, expiresInMs }: TokenRotation,
    actor: Actor,
  ): Promise<RotatedToken | null> {
    return retryRefused(() =>
      this.audit.transaction(async (manager, record) => {
        const [old]: {
          id: string;
          scopes: string[];
          expires_at: Date;
          lifetime_ms: number | null;
        }[] = await manager.query(ROTATE_AND_ANNOUNCE, [name, overlapMs]);
        if (!old) return null;
        const lifetimeMs = expiresInMs ?? old.lifetime_ms;
        const issued = await this.issue(
          manager,
          record,
          actor,
          {
            name,
            scopes: old.scopes,
            expiresAt: lifetimeMs === null ? null : new Date(Date.now() + lifetimeMs),
          },
          { rotatedFrom: old.id },
        );
        await record({
          event: 'token.rotated',
          subjectId: old.id,
          actor,
          details: { name, successorId: issued.token.id, overlapEndsAt: old.expires_at },
        });
        return { ...issued, overlapEndsAt: old.expires_at };
      }),
    );
  }

  /** Stores a new token and records its creation, in the caller's transaction. */
  private async issue(
    manager: EntityManager,
    record: RecordEvent,
    actor: Actor,
    { name, scopes, expiresAt }: Pick<ApiToken, 'name' | 'scopes' | 'expiresAt'>,
    details: Record<string, unknown>,
  ): Promise<IssuedToken> {
    const secret = generateTokenSecret();
    const token = await manager.save(
      manager.create(ApiToken, {
        name,
        secretHash: hashTokenSecret(secret),
        scopes: [...new Set(scopes)],
        expiresAt,
      }),
    );
    await record({
      event: 'token.created',
      subjectId: token.id,
      actor,
      details: { name, scopes: token.scopes, expiresAt, ...details },
    });
    return { secret, token };
  }

  list(): Promise<ApiToken[]> {
    return this.tokens.find({ order: { createdAt: 'ASC' } });
  }

  /**
   * Revokes the tokens with this name that still work (the live one, and one rotated
   * whose overlap has not ended); false when there is none. Every service process hears
   * of it through PostgreSQL and stops accepting them at once.
   */
  async revoke(name: string, actor: Actor): Promise<boolean> {
    const revoked = await retryRefused(() =>
      this.audit.transaction((manager, record) => this.revokeWith(manager, record, name, actor)),
    );
    return revoked.length > 0;
  }

  /** @returns the ids of the tokens revoked. */
  private async revokeWith(
    manager: EntityManager,
    record: RecordEvent,
    name: string,
    actor: Actor,
  ): Promise<string[]> {
    const revoked: { id: string; secret_hash: string }[] = await manager.query(
      REVOKE_AND_ANNOUNCE,
      [name],
    );
    for (const { id, secret_hash } of revoked) {
      // This process need not wait for its own announcement to come back.
      this.verified.evict(secret_hash);
      await record({ event: 'token.revoked', subjectId: id, actor, details: { name } });
    }
    return revoked.map(({ id }) => id);
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
