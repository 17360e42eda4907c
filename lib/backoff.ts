// Exponential backoff with jitter, for every retry of the bench: reconnecting
// to a broker, reopening a serial port, redelivering to a third party.

export interface BackoffPolicy {
  /** Delay before the first retry, ms. */
  readonly initialMs: number;
  /** Longest delay, ms. */
  readonly maxMs: number;
  /** Growth per attempt (2 doubles). */
  readonly factor: number;
  /** Share of the delay drawn at random, 0..1, so many clients that lost the
   * same broker do not all come back in the same millisecond. */
  readonly jitter: number;
}

export const defaultBackoff: BackoffPolicy = Object.freeze({ initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5 });

/** The delay before retry number `attempt` (0 for the first), ms. */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponential = policy.initialMs * policy.factor ** Math.max(0, attempt);
  const capped = Math.min(policy.maxMs, exponential);
  return Math.round(capped * (1 - policy.jitter * random()));
}
