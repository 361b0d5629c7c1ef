/**
 * Verified tokens, kept in the process so that a request need not ask the database who
 * its token belongs to. An entry lives `ttlMs` at most: revocations are announced and
 * evict it at once (see TokenRevocationListener), and the lifetime bounds the damage of
 * one that is never heard of. Until the announcements are heard (`startCaching`), nothing
 * is kept. Unknown tokens are not kept: a new entry cannot push out a valid one for them.
 */
export class VerifiedTokenCache<Token> {
  private readonly entries = new Map<string, { token: Promise<Token | null>; until: number }>();
  private caching = false;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /**
   * The token with this hash, from the cache or else from `load`. Concurrent requests
   * for one hash share one load.
   */
  get(hash: string, load: () => Promise<Token | null>): Promise<Token | null> {
    const now = Date.now();
    const entry = this.entries.get(hash);
    if (entry && entry.until > now) return entry.token;
    const token = load();
    if (!this.caching) return token;
    // Re-inserted, so that the Map's order is the order of expiry.
    this.entries.delete(hash);
    const fresh = { token, until: now + this.ttlMs };
    this.entries.set(hash, fresh);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    // An unknown token or a failed load is not kept; an eviction meanwhile removed `fresh`.
    token.then(
      (found) => found === null && this.forget(hash, fresh),
      () => this.forget(hash, fresh),
    );
    return token;
  }

  evict(hash: string): void {
    this.entries.delete(hash);
  }

  /** Revocations are being heard from now on. */
  startCaching(): void {
    this.caching = true;
  }

  /** Revocations may go unheard: trust nothing kept so far, and keep nothing new. */
  stopCaching(): void {
    this.caching = false;
    this.entries.clear();
  }

  private forget(hash: string, entry: object): void {
    if (this.entries.get(hash) === entry) this.entries.delete(hash);
  }
}
