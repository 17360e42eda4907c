// The units of a group commit (api/db/group-commit.ts) and what both engines
// do with them alike: a unit's outcome, its settlement, the afterCommit
// callbacks, and the fallback of a shared work (its inputs together, then,
// if that fails, each alone). An engine (group-commit-sqlite.ts,
// group-commit-postgres.ts) says only how a group's transactions run.
import type { Executor } from './executor.js';

/** A unit of its own: its queries on `on` (the group's transaction). */
export type UnitWork<T> = (on: Executor) => T | Promise<T>;

/**
 * Work that the units of one group share: many inputs answered by one call
 * (the MQTT response messages of a turn stored by one ingestBoxLogs call:
 * boxes, parkings and keys read once, the responses of a box verified
 * together, one bulk insert). `runAll` answers each input, in order, its
 * queries on `on`. If it throws, what it wrote is rolled back and each input
 * is run again alone (`runAll(on, [input])`), so only the input that fails is
 * lost.
 */
export interface SharedWork<I, R> {
  runAll(on: Executor, inputs: readonly I[]): readonly R[] | Promise<readonly R[]>;
}

interface Settle {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** A unit is work of its own or an input of a shared work (an MQTT message, an HTTP batch). */
export type Unit = Settle &
  ({ readonly work: UnitWork<unknown> } | { readonly shared: SharedWork<unknown, unknown>; readonly input: unknown });

export type SharedUnit = Unit & { readonly shared: SharedWork<unknown, unknown>; readonly input: unknown };

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export type Callbacks = (() => void)[];

/** What a group commit counts; its engine adds to it. */
export interface GroupCommitTally {
  /** Transactions committed (or attempted), and units taken. */
  readonly counters: { groups: number; units: number };
  /** Inputs of a shared work run again alone because their shared run failed. */
  ranAlone: number;
  /** PostgreSQL: transactions run again after losing a race (a deadlock, a serialization failure). */
  raceRetries: number;
  /** afterCommit callbacks that threw (counted; the units settle anyway). */
  afterCommitFailures: number;
}

export interface GroupCommitEngineOptions {
  readonly tally: GroupCommitTally;
  /** Units (or inputs of one shared work) at most in one transaction. */
  readonly maxGroup: number;
}

/** How one engine runs the groups that the group commit forms (the store gives its own). */
export interface GroupCommitEngine {
  /** A group still runs and the next must wait for it (SQLite: groups never overlap). */
  readonly busy: boolean;
  /** Runs a group's units, each settled once its transaction ended. Never rejects. */
  runGroup(units: readonly Unit[]): Promise<void>;
  /** The afterCommit list of the unit running here; undefined outside a unit. */
  callbacksOfCurrentUnit(): Callbacks | undefined;
}

/**
 * The fallback, written once: the inputs of a shared work run together by
 * `attempt`; if that fails and they are more than one, each runs again
 * alone, in order, so only the one that fails is lost. `answer` hears each
 * input's outcome (by its index in `inputs`) as soon as it is known.
 */
export async function togetherThenAlone(
  shared: SharedWork<unknown, unknown>,
  inputs: readonly unknown[],
  attempt: (work: UnitWork<unknown[]>) => Promise<Outcome>,
  tally: GroupCommitTally,
  answer: (index: number, outcome: Outcome) => void,
): Promise<void> {
  const together = await attempt(answers(shared, inputs));
  if (together.ok) {
    (together.value as unknown[]).forEach((value, index) => answer(index, { ok: true, value }));
    return;
  }
  if (inputs.length === 1) {
    answer(0, together);
    return;
  }
  tally.ranAlone += inputs.length;
  for (const [index, input] of inputs.entries()) {
    const alone = await attempt(answers(shared, [input]));
    answer(index, alone.ok ? { ok: true, value: (alone.value as unknown[])[0] } : alone);
  }
}

/** The shared work over `inputs`, checked to answer each. */
function answers(shared: SharedWork<unknown, unknown>, inputs: readonly unknown[]): UnitWork<unknown[]> {
  return async (on) => {
    const values = await shared.runAll(on, inputs);
    if (values.length !== inputs.length)
      throw new Error(`shared work answered ${values.length} of ${inputs.length} inputs`);
    return [...values];
  };
}

/** The indexes of each shared work's inputs, in order. */
export function sharesOf(units: readonly Unit[]): Map<SharedWork<unknown, unknown>, number[]> {
  const shares = new Map<SharedWork<unknown, unknown>, number[]>();
  units.forEach((unit, index) => {
    if (!('shared' in unit)) return;
    const indexes = shares.get(unit.shared);
    if (indexes === undefined) shares.set(unit.shared, [index]);
    else indexes.push(index);
  });
  return shares;
}

/** `work`'s outcome, and the afterCommit callbacks it registered in `callbacks` (kept only if it succeeded). */
export async function outcomeOf(
  work: () => unknown,
  callbacks: Callbacks,
): Promise<{ outcome: Outcome; callbacks: Callbacks }> {
  try {
    return { outcome: { ok: true, value: await work() }, callbacks };
  } catch (error) {
    return { outcome: { ok: false, error }, callbacks: [] };
  }
}

export function runCallbacks(callbacks: readonly (() => void)[], tally: GroupCommitTally): void {
  for (const callback of callbacks) {
    // Event publishing (api/events/): cheap, and never allowed to keep a
    // unit from settling; a failure is counted, not thrown.
    try {
      callback();
    } catch {
      tally.afterCommitFailures += 1;
    }
  }
}

export function settleAll(units: readonly Settle[], outcomes: readonly Outcome[]): void {
  units.forEach((unit, index) => {
    const outcome = outcomes[index];
    if (outcome?.ok) unit.resolve(outcome.value);
    else unit.reject(outcome?.error);
  });
}
