// A bounded in-process cache of bearer lookups, keyed by the token's SHA-256
// hash (base64url text, see tokenHashText). Why: every SQLite read takes WAL
// lock system calls, and under load they cost a protected route half its
// throughput (docs/benchmarks.md, The API benchmark). An entry lives at most TOKEN_CACHE_SECONDS
// and never past the token's own expiry; revocation and refresh rotation in
// this process evict at once (the token repository reports every pair it
// ends). The trade-off: a pair ended by ANOTHER process sharing the database
// stays usable here for at most TOKEN_CACHE_SECONDS. Only successful lookups
// are cached, so unknown, revoked or expired tokens always read the database.
import type { Clock } from '../../lib/clock.js';
import type { PublicUser } from './users-repository.js';

/** At most this many tokens are cached; past it the oldest entry goes. */
export const BEARER_CACHE_MAX_ENTRIES = 10_000;

interface Entry {
  user: PublicUser;
  pairId: number;
  /** ms since the epoch: min(cached at + TTL, the token's expiry). */
  validUntil: number;
}

export class BearerCache {
  private readonly byHash = new Map<string, Entry>();
  /** pair id -> hash key, so ending a pair finds its entry. */
  private readonly hashOfPair = new Map<number, string>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly maxEntries = BEARER_CACHE_MAX_ENTRIES,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The cached user of a token hash, or undefined (then read the database). */
  get(key: string): PublicUser | undefined {
    if (!this.enabled) return undefined;
    const entry = this.byHash.get(key);
    if (entry === undefined) return undefined;
    if (entry.validUntil <= this.clock.now()) {
      this.remove(key, entry.pairId);
      return undefined;
    }
    return entry.user;
  }

  /** Remembers a successful lookup of a token that expires at `accessExpiresAt`. */
  set(key: string, pairId: number, user: PublicUser, accessExpiresAt: number): void {
    if (!this.enabled) return;
    const previous = this.byHash.get(key);
    if (previous) this.remove(key, previous.pairId);
    this.byHash.set(key, { user, pairId, validUntil: Math.min(this.clock.now() + this.ttlMs, accessExpiresAt) });
    this.hashOfPair.set(pairId, key);
    if (this.byHash.size > this.maxEntries) {
      const oldest = this.byHash.entries().next().value;
      if (oldest !== undefined) this.remove(oldest[0], oldest[1].pairId);
    }
  }

  /** A token pair ended (revoked, rotated): its access token is no longer cached. */
  evictPair(pairId: number): void {
    const key = this.hashOfPair.get(pairId);
    if (key !== undefined) this.remove(key, pairId);
  }

  private remove(key: string, pairId: number): void {
    this.byHash.delete(key);
    if (this.hashOfPair.get(pairId) === key) this.hashOfPair.delete(pairId);
  }
}
