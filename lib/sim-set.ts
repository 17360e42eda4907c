// The `sim/set` settings of a simulated box (docs/bench.md, Simulated boxes):
// what a message on `parkbench/boxes/{module_id}/sim/set`, a fleet file's
// "sim" object or the simulator's flags may say, and their one parser. In
// lib/ because the simulator applies them and the API checks them before it
// publishes one for an operator (POST /api/operator/boxes/:module_id/sim).

/** What misbehaviour is switched on, for as long as it stays on. */
export interface FaultSettings {
  /** Share of commands silently ignored, 0..1. */
  readonly dropCommands: number;
  /** Share of responses sent with one byte flipped, 0..1. */
  readonly corruptResponses: number;
  /** Extra delay before every answer, ms. */
  readonly delayMs: number;
  /** The arm does not move: ACCESS answers BARRIER_FAULT. */
  readonly jammed: boolean;
}

/** One `sim/set` message: any subset of these, applied in one go. */
export interface SimSetCommand {
  readonly faults?: Partial<FaultSettings>;
  readonly batteryMv?: number;
  /** Sets the box clock this far from true time, seconds (positive: ahead). */
  readonly clockOffsetSeconds?: number;
  readonly driftPpm?: number;
  /** Leave the network now and come back after this long, seconds. */
  readonly offlineSeconds?: number;
  /** A car drives through now (the presence sensor). */
  readonly carPassed?: boolean;
}

/** A `sim/set` message as JSON says it, each field optional (docs/bench.md, Simulated boxes). */
export interface SimSetMessage {
  /** Share of commands ignored, 0..1. */
  readonly drop_commands?: number;
  /** Share of responses sent with one byte flipped, 0..1. */
  readonly corrupt_responses?: number;
  /** Extra delay before every answer, ms (0..600000). */
  readonly delay_ms?: number;
  /** true: the arm does not move, an ACCESS answers BARRIER_FAULT. */
  readonly jam?: boolean;
  /** The battery level, mV (below the box's min_battery_mv an ACCESS answers LOW_BATTERY). */
  readonly battery_mv?: number;
  /** The box clock this far from true time, seconds (positive: ahead). */
  readonly clock_offset_seconds?: number;
  /** Clock drift, ppm. */
  readonly drift_ppm?: number;
  /** Drop off the network now and come back after this long, seconds. */
  readonly offline_seconds?: number;
  /** true: a car drives through now. */
  readonly car_passed?: boolean;
}

export class SimSetError extends Error {
  constructor(
    readonly field: string,
    /** What is wrong with it, without the field's name. */
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'SimSetError';
  }
}

const MAX_DELAY_MS = 600_000;
const MAX_OFFLINE_SECONDS = 86_400;

/** The JSON names of `sim/set` (documented in docs/bench.md, Simulated boxes), each with its check. */
const fieldParsers: Record<keyof SimSetMessage, (value: unknown, command: Mutable<SimSetCommand>) => void> = {
  drop_commands: (value, command) =>
    (command.faults = { ...command.faults, dropCommands: share(value, 'drop_commands') }),
  corrupt_responses: (value, command) =>
    (command.faults = { ...command.faults, corruptResponses: share(value, 'corrupt_responses') }),
  delay_ms: (value, command) =>
    (command.faults = { ...command.faults, delayMs: number(value, 'delay_ms', 0, MAX_DELAY_MS) }),
  jam: (value, command) => (command.faults = { ...command.faults, jammed: boolean(value, 'jam') }),
  battery_mv: (value, command) => (command.batteryMv = number(value, 'battery_mv', 0, 0xffff)),
  clock_offset_seconds: (value, command) =>
    (command.clockOffsetSeconds = number(value, 'clock_offset_seconds', -U32, U32)),
  drift_ppm: (value, command) => (command.driftPpm = number(value, 'drift_ppm', -1e6, 1e6)),
  offline_seconds: (value, command) =>
    (command.offlineSeconds = number(value, 'offline_seconds', 0, MAX_OFFLINE_SECONDS)),
  car_passed: (value, command) => (command.carPassed = boolean(value, 'car_passed')),
};

const U32 = 0xffffffff;

export const simSetFields: readonly string[] = Object.keys(fieldParsers);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Parses a `sim/set` payload; unknown fields are refused so a typo is seen. */
export function parseSimSet(payload: unknown): SimSetCommand {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new SimSetError('sim/set', 'must be a JSON object');
  }
  const command: Mutable<SimSetCommand> = {};
  for (const [name, value] of Object.entries(payload)) {
    // Own fields only: `toString` or `__proto__` is no setting.
    const parse = Object.hasOwn(fieldParsers, name) ? fieldParsers[name as keyof SimSetMessage] : undefined;
    if (parse === undefined) throw new SimSetError(name, `unknown setting (known: ${simSetFields.join(', ')})`);
    parse(value, command);
  }
  return command;
}

function share(value: unknown, name: string): number {
  return number(value, name, 0, 1);
}

function number(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new SimSetError(name, `must be a number from ${min} to ${max}`);
  }
  return value;
}

function boolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new SimSetError(name, 'must be true or false');
  return value;
}
