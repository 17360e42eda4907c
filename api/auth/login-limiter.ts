// Limits failed logins per username and per client address, in sliding
// windows on an injected clock. In memory: the limits protect one process's
// scrypt budget and slow guessing; several API processes would each count
// their own (documented). Only failures count; a success clears its
// username's failures but not its address's, so one good account cannot be
// used to reset an address that is guessing others.
//
// An attempt takes a slot in both windows BEFORE its password is hashed and
// holds it while in flight: checking first and recording the failure after
// the ~100 ms hash let a concurrent burst of any size through the check
// (issue 12). A failure keeps its slot; a success gives its own slot back, so
// successes still never count.
import type { Clock } from '../../lib/clock.js';

export interface LoginLimits {
  maxFailuresPerUsername: number;
  maxFailuresPerAddress: number;
  windowMs: number;
}

/** Keys kept at most; past it, the oldest keys are dropped (bounded memory). */
const MAX_KEYS = 100_000;

/** One attempt's slot in a window: a failure, or an attempt still in flight. */
interface Slot {
  readonly at: number;
  inFlight: boolean;
}

class FailureWindow {
  private readonly slots = new Map<string, Slot[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Milliseconds until a new attempt is allowed, or 0 when it is allowed now. */
  retryAfterMs(key: string, now: number): number {
    const slots = this.recent(key, now);
    if (slots.length < this.max) return 0;
    // The slot whose expiry frees room; an in-flight one may end sooner (a
    // success) but is counted as what it may become, a failure.
    const oldest = slots[slots.length - this.max]?.at ?? now;
    return Math.max(1, oldest + this.windowMs - now);
  }

  /** Takes a slot; the caller checked retryAfterMs first (same tick). */
  take(key: string, now: number): Slot {
    const slots = this.recent(key, now);
    const slot: Slot = { at: now, inFlight: true };
    slots.push(slot);
    if (slots.length > this.max) slots.splice(0, slots.length - this.max);
    this.slots.delete(key); // re-insert so Map order tracks recency
    this.slots.set(key, slots);
    if (this.slots.size > MAX_KEYS) {
      const oldestKey = this.slots.keys().next().value;
      if (oldestKey !== undefined) this.slots.delete(oldestKey);
    }
    return slot;
  }

  /** Gives a slot back (its attempt was no failure). */
  release(key: string, slot: Slot): void {
    const slots = this.slots.get(key);
    const index = slots?.indexOf(slot) ?? -1;
    if (slots === undefined || index < 0) return;
    slots.splice(index, 1);
    if (slots.length === 0) this.slots.delete(key);
  }

  /** Forgets the key's failures; attempts still in flight keep their slots. */
  clearFailures(key: string): void {
    const slots = this.slots.get(key);
    if (slots === undefined) return;
    const inFlight = slots.filter((slot) => slot.inFlight);
    if (inFlight.length === 0) this.slots.delete(key);
    else this.slots.set(key, inFlight);
  }

  private recent(key: string, now: number): Slot[] {
    const slots = this.slots.get(key) ?? [];
    const fresh = slots.filter((slot) => slot.at > now - this.windowMs);
    if (fresh.length === 0) this.slots.delete(key);
    return fresh;
  }
}

/** A login attempt holding a slot in both windows until it ends. */
export interface LoginAttempt {
  /** The password was wrong (or the user unknown): the slots stay, as failures. */
  failed(): void;
  /** The login succeeded: its slots go back and the username's failures are cleared. */
  succeeded(): void;
  /** The attempt ended before any password verdict (a bad client, an error):
   * its slots go back. A no-op once failed() or succeeded() was called. */
  abandon(): void;
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
    const ms = Math.max(
      this.byUsername.retryAfterMs(normalize(username), now),
      this.byAddress.retryAfterMs(address, now),
    );
    return Math.ceil(ms / 1000);
  }

  /** Starts an attempt: either the seconds to wait (a limit is reached,
   * counting attempts in flight) or the attempt, holding a slot in both
   * windows. Check and take run in one synchronous step, so concurrent
   * requests cannot all pass the check. */
  begin(username: string, address: string): { retryAfterSeconds: number } | LoginAttempt {
    const wait = this.retryAfterSeconds(username, address);
    if (wait > 0) return { retryAfterSeconds: wait };
    const key = normalize(username);
    const now = this.clock.now();
    const userSlot = this.byUsername.take(key, now);
    const addressSlot = this.byAddress.take(address, now);
    let ended = false;
    const giveBack = () => {
      this.byUsername.release(key, userSlot);
      this.byAddress.release(address, addressSlot);
    };
    return {
      failed: () => {
        if (ended) return;
        ended = true;
        userSlot.inFlight = false;
        addressSlot.inFlight = false;
      },
      succeeded: () => {
        if (ended) return;
        ended = true;
        giveBack();
        this.byUsername.clearFailures(key);
      },
      abandon: () => {
        if (ended) return;
        ended = true;
        giveBack();
      },
    };
  }
}

function normalize(username: string): string {
  return username.trim().toLowerCase();
}
