// When a failed delivery is tried again: the schedule Standard Webhooks
// recommends, immediately then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
// 14 h, 20 h and 24 h after each failure, with jitter; after the tenth failed
// attempt (about 3 days and 4 hours) the delivery is dead.

/** The wait after the 1st, 2nd, ... failed attempt, ms. */
export const RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
]);
/** Jitter: a wait is lengthened by up to this fraction, never shortened, so
 * receivers recovering at once are not hit by every sender in step. */
export const RETRY_JITTER = 0.2;
/** A Retry-After (429, 503) longer than this is cut to it: the schedule's longest wait. */
export const RETRY_AFTER_MAX_MS = 86_400_000;

/** The wait after `failedAttempts` failed attempts (1 after the first), ms;
 * undefined when the schedule is over: the delivery is dead. */
export function retryDelay(failedAttempts: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_SCHEDULE_MS[failedAttempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + RETRY_JITTER * random()));
}

/** A Retry-After header (delay-seconds or an HTTP-date) as ms from `nowMs`,
 * at most RETRY_AFTER_MAX_MS; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, ms), RETRY_AFTER_MAX_MS);
}
