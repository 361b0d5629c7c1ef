interface Entry<Token> {
  token: Promise<Token | null>;
  /** The token has been found; until then, or when not found, the entry vouches for nothing. */
  found?: boolean;
  /** Trusted until then, never after. */
  until: number;
  /** A background reload is under way. */
  refreshing?: boolean;
}

/**
 * Verified tokens, kept in the process so that a request need not ask the database who
 * its token belongs to. An entry lives `ttlMs` at most: revocations are announced and
 * evict it at once (see TokenRevocationListener), and the lifetime bounds the damage of
 * one that is never heard of. Until the announcements are heard (`startCaching`), nothing
 * is kept. Unknown tokens are remembered apart, for `unknownTtlMs` only, in a map of their
 * own: a flood of them costs a query per token and per `unknownTtlMs`, not per request,
 * and cannot push out a valid token. A token created right after a miss is refused for
 * that long at most. A token in use is reloaded in the background in the second half of
 * its entry's life, so that a client at work never waits for its own token's lookup
 * (behind a flood's, say), and no entry is ever trusted past its lifetime.
 */
export class VerifiedTokenCache<Token> {
  private readonly entries = new Map<string, Entry<Token>>();
  /** Hashes found unknown, with the time until which they are answered unknown. */
  private readonly unknown = new Map<string, number>();
  private caching = false;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly unknownTtlMs = 0,
  ) {}

  /**
   * The token with this hash, from the cache or else from `load`, which is told whether
   * the token is known, i.e. kept until its entry expired or being reloaded (a client
   * known to be valid). Concurrent requests for one hash share one load.
   */
  get(hash: string, load: (known: boolean) => Promise<Token | null>): Promise<Token | null> {
    const now = Date.now();
    const entry = this.entries.get(hash);
    if (entry && entry.until > now) {
      if (!entry.refreshing && entry.until - now < this.ttlMs / 2) this.refresh(hash, entry, load);
      return entry.token;
    }
    if ((this.unknown.get(hash) ?? 0) > now) return Promise.resolve(null);
    const token = load(entry !== undefined);
    if (!this.caching) return token;
    // Re-inserted, so that the Map's order is the order of expiry.
    this.entries.delete(hash);
    const fresh: Entry<Token> = { token, until: now + this.ttlMs };
    this.entries.set(hash, fresh);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    // A failed load is not kept; an eviction meanwhile removed `fresh`.
    token.then(
      (found) => {
        if (found !== null) fresh.found = true;
        else if (this.forget(hash, fresh)) this.rememberUnknown(hash);
      },
      () => this.forget(hash, fresh),
    );
    return token;
  }

  /**
   * Whether a token with this hash was found and is still trusted, answered at once and
   * never by a lookup. Whether it is expired or revoked since is the guard's to check.
   */
  holds(hash: string): boolean {
    const entry = this.entries.get(hash);
    return entry?.found === true && entry.until > Date.now();
  }

  evict(hash: string): void {
    this.entries.delete(hash);
    this.unknown.delete(hash);
  }

  /** Revocations are being heard from now on. */
  startCaching(): void {
    this.caching = true;
  }

  /** Revocations may go unheard: trust nothing kept so far, and keep nothing new. */
  stopCaching(): void {
    this.caching = false;
    this.entries.clear();
    this.unknown.clear();
  }

  /**
   * Reloads a kept token while its entry still answers; the answer replaces the entry
   * unless it was evicted (revoked) meanwhile. A failed reload leaves the entry to live
   * out its time, and the next request tries again.
   */
  private refresh(
    hash: string,
    entry: Entry<Token>,
    load: (known: boolean) => Promise<Token | null>,
  ): void {
    entry.refreshing = true;
    const until = Date.now() + this.ttlMs;
    load(true).then(
      (found) => {
        if (!this.forget(hash, entry)) return;
        if (found === null) this.rememberUnknown(hash);
        else this.entries.set(hash, { token: Promise.resolve(found), found: true, until });
      },
      () => (entry.refreshing = false),
    );
  }

  /** Whether `entry` was still the one kept for `hash`. */
  private forget(hash: string, entry: object): boolean {
    if (this.entries.get(hash) !== entry) return false;
    this.entries.delete(hash);
    return true;
  }

  private rememberUnknown(hash: string): void {
    if (this.unknownTtlMs === 0) return;
    // Re-inserted, so that the Map's order is the order of expiry.
    this.unknown.delete(hash);
    this.unknown.set(hash, Date.now() + this.unknownTtlMs);
    if (this.unknown.size > this.maxEntries) this.unknown.delete(this.unknown.keys().next().value!);
  }
}
