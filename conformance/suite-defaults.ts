// What every runner of the suite shares (the command line, and the operator
// API's runs, api/conformance-runs/): the default answer, cycle and first-answer times, and
// where a run draws its smart key ids from.
import { randomInt } from 'node:crypto';

/** Longest acceptable answer, ms (`--answer-ms`). */
export const DEFAULT_ANSWER_MS = 2_000;
/** Longest wait for OPENING then CLOSED after a valid ACCESS, ms (`--cycle-ms`). */
export const DEFAULT_CYCLE_MS = 30_000;

/** Longest wait for the box's first answer before the cases, ms (`--wait-ms`):
 * a box started just before the suite gets this long to listen. */
export const DEFAULT_WAIT_MS = 10_000;

/** The smart key ids a run draws from: above any the service hands out
 * (it counts from 1), with room for the ~1,100 a run may take. */
export const SUITE_KEY_IDS = { min: 0x8000_0000, max: 0xffff_0000 } as const;

/** Fresh smart key ids for every run, so tries a box keeps from an earlier
 * run never meet this one's (docs/protocol.md, step 9); from 2^31 up, where
 * the service's own key ids never are, so the suite's revocations lock out
 * no real key. */
export function freshKeyIdBase(): number {
  return randomInt(SUITE_KEY_IDS.min, SUITE_KEY_IDS.max);
}
