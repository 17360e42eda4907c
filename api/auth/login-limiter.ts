// Limits failed logins per username and per client address, in sliding
// windows on an injected clock. In memory: the limits protect one process's
// scrypt budget and slow guessing; several API processes would each count
// their own (documented). Only failures count; a success clears its
// username's failures but not its address's, so one good account cannot be
// used to reset an address that is guessing others.
import type { Clock } from '../../lib/clock.js';

export interface LoginLimits {
  maxFailuresPerUsername: number;
  maxFailuresPerAddress: number;
  windowMs: number;
}

/** Keys kept at most; past it, the oldest keys are dropped (bounded memory). */
const MAX_KEYS = 100_000;

class FailureWindow {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Milliseconds until a new attempt is allowed, or 0 when it is allowed now. */
  retryAfterMs(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times.length < this.max) return 0;
    const oldest = times[times.length - this.max] ?? now;
    return Math.max(1, oldest + this.windowMs - now);
  }

  record(key: string, now: number): void {
    const times = this.recent(key, now);
    times.push(now);
    if (times.length > this.max) times.splice(0, times.length - this.max);
    this.failures.delete(key); // re-insert so Map order tracks recency
    this.failures.set(key, times);
    if (this.failures.size > MAX_KEYS) {
      const oldestKey = this.failures.keys().next().value;
      if (oldestKey !== undefined) this.failures.delete(oldestKey);
    }
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key) ?? [];
    const fresh = times.filter((time) => time > now - this.windowMs);
    if (fresh.length === 0) this.failures.delete(key);
    return fresh;
  }
}

export class LoginLimiter {
  private readonly byUsername: FailureWindow;
  private readonly byAddress: FailureWindow;

  constructor(
    limits: LoginLimits,
    private readonly clock: Clock,
  ) {
    this.byUsername = new FailureWindow(limits.maxFailuresPerUsername, limits.windowMs);
    this.byAddress = new FailureWindow(limits.maxFailuresPerAddress, limits.windowMs);
  }

  /** Seconds to wait (for Retry-After) when either limit is reached, else 0. */
  retryAfterSeconds(username: string, address: string): number {
    const now = this.clock.now();
    const ms = Math.max(this.byUsername.retryAfterMs(normalize(username), now), this.byAddress.retryAfterMs(address, now));
    return Math.ceil(ms / 1000);
  }

  recordFailure(username: string, address: string): void {
    const now = this.clock.now();
    this.byUsername.record(normalize(username), now);
    this.byAddress.record(address, now);
  }

  recordSuccess(username: string): void {
    this.byUsername.clear(normalize(username));
  }
}

function normalize(username: string): string {
  return username.trim().toLowerCase();
}
