// The box's decision (PROTOCOL.md, checks 1..11) as a pure function: the
// reference for firmware, and what the simulator runs. No randomness: the
// response nonce is module_id || box_seq || box_time.
import { Barrier, Direction, FrameKind, LIMITS, REMAINING_NOT_APPLICABLE, Status, isControlKind } from './constants.js';
import { type BoxConditions, type BoxConfig, type BoxState, type KeyTries, directionByte, skewOf } from './box.js';
import { type OpenedCommand, authenticateCommand, parseCommandHeader } from './command.js';
import { type AccessBody, decodeBody } from './command-body.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';
import { type ResponseFields, sealResponse } from './response.js';

/** What the box does besides answering. */
export type Effect =
  | { readonly type: 'none' }
  /** ACCESS accepted: open the barrier. */
  | { readonly type: 'open' }
  /** ACCESS accepted but the barrier did not move (BARRIER_FAULT). */
  | { readonly type: 'fault' }
  /** TIME_SET accepted: the clock is now `time`. */
  | { readonly type: 'setTime'; readonly time: number };

export interface Decision {
  readonly status: Status;
  readonly kind: number;
  readonly keyId: number;
  readonly remaining: number;
  /** The response's fields, and the sealed 32-byte response frame. */
  readonly fields: ResponseFields;
  readonly response: Buffer;
  /** The new state (the input state is never mutated). */
  readonly state: BoxState;
  readonly effect: Effect;
  /** The opened command when its tag verified and its body parsed (steps 1..5 passed). */
  readonly command: OpenedCommand | null;
}

export interface StatusReport {
  readonly fields: ResponseFields;
  readonly response: Buffer;
  readonly state: BoxState;
}

const NO_EFFECT: Effect = { type: 'none' };
const OPEN: Effect = { type: 'open' };
const FAULT: Effect = { type: 'fault' };

/** What a check decided; everything not set keeps the box's current value. */
interface Outcome {
  status: Status;
  kind: number;
  keyId: number;
  direction: Direction;
  remaining: number;
  boxTime?: number;
  barrier?: Barrier;
  tries?: ReadonlyMap<number, KeyTries>;
  lastControlSeq?: number;
  effect?: Effect;
  command?: OpenedCommand;
}

function nextBoxSeq(state: BoxState): number {
  // PROTOCOL.md, response frame, offset 11: strictly increasing over the box's life.
  if (state.boxSeq >= LIMITS.U32_MAX) throw new ProtocolError(ProtocolErrorCode.BOX_SEQ_EXHAUSTED, 'box_seq cannot increase past 0xFFFFFFFF');
  return state.boxSeq + 1;
}

/** Seals the one response to `commandBytes` and builds the new state. */
function respond(config: BoxConfig, state: BoxState, conditions: BoxConditions, commandBytes: Uint8Array, outcome: Outcome): Decision {
  const boxSeq = nextBoxSeq(state);
  const fields: ResponseFields = {
    status: outcome.status,
    kind: outcome.kind,
    moduleId: config.moduleId,
    keyId: outcome.keyId,
    boxSeq,
    boxTime: outcome.boxTime ?? conditions.boxTime,
    batteryMv: conditions.batteryMv,
    barrier: outcome.barrier ?? conditions.barrier,
    direction: outcome.direction,
    remaining: outcome.remaining,
  };
  return {
    status: fields.status,
    kind: fields.kind,
    keyId: fields.keyId,
    remaining: fields.remaining,
    fields,
    response: sealResponse(fields, config.boxKey, commandBytes),
    state: {
      boxSeq,
      lastControlSeq: outcome.lastControlSeq ?? state.lastControlSeq,
      tries: outcome.tries ?? state.tries,
    },
    effect: outcome.effect ?? NO_EFFECT,
    command: outcome.command ?? null,
  };
}

/** Runs PROTOCOL.md's checks on `commandBytes` in order; the first that fails
 * gives the status. Every command gets exactly one response. Pure: the input
 * state is not mutated, and no randomness is used. */
export function decide(config: BoxConfig, state: BoxState, conditions: BoxConditions, commandBytes: Uint8Array): Decision {
  const ownDirection = directionByte(config.direction);
  // Steps 1 and 2: version, whole header, known kind; else kind and key_id answer 0.
  const parsed = parseCommandHeader(commandBytes);
  if (!parsed.ok) {
    return respond(config, state, conditions, commandBytes, { status: parsed.status, kind: 0, keyId: 0, direction: ownDirection, remaining: REMAINING_NOT_APPLICABLE });
  }
  const { header } = parsed;
  const control = isControlKind(header.kind);
  // PROTOCOL.md, response frame, offset 22: 0 for a control kind.
  const outcome: Outcome = {
    status: Status.OK,
    kind: header.kind,
    keyId: header.keyId,
    direction: control ? Direction.CONTROL : ownDirection,
    remaining: REMAINING_NOT_APPLICABLE,
  };

  // Step 3: scope.
  if (header.kind === FrameKind.ACCESS ? header.scope !== config.parkingId : header.scope !== config.moduleId) {
    outcome.status = header.kind === FrameKind.ACCESS ? Status.WRONG_PARKING : Status.WRONG_MODULE;
    return respond(config, state, conditions, commandBytes, outcome);
  }

  // Step 4: the tag, under K_park (then the next K_park) for ACCESS, K_box for control kinds.
  const keys = control ? [config.boxKey] : config.parkingKeyNext === null ? [config.parkingKey] : [config.parkingKey, config.parkingKeyNext];
  const opened = authenticateCommand(commandBytes, header, keys);
  if (opened === null) {
    outcome.status = Status.AUTH_FAILED;
    return respond(config, state, conditions, commandBytes, outcome);
  }

  // Step 5: the body's length.
  const body = decodeBody(header.kind, opened.plaintext);
  if (body === null) {
    outcome.status = Status.MALFORMED;
    return respond(config, state, conditions, commandBytes, outcome);
  }
  const command = { kind: header.kind, keyId: header.keyId, scope: header.scope, body, nonce: Buffer.from(header.nonce) } as OpenedCommand;
  outcome.command = command;

  if (command.kind !== FrameKind.ACCESS) {
    // Step 6: control sequence, then done (battery and barrier do not refuse a control command).
    if (header.keyId <= state.lastControlSeq) {
      outcome.status = Status.REPLAY;
    } else {
      outcome.lastControlSeq = header.keyId;
      if (command.kind === FrameKind.TIME_SET) {
        // TIME_SET sets the clock first: the response carries the new time.
        outcome.boxTime = command.body.time;
        outcome.effect = { type: 'setTime', time: command.body.time };
      }
    }
    return respond(config, state, conditions, commandBytes, outcome);
  }
  decideAccess(config, state, conditions, command.body, outcome);
  return respond(config, state, conditions, commandBytes, outcome);
}

/** Steps 7..11 of an ACCESS command whose tag and body passed: sets the
 * outcome's status, remaining, tries, barrier and effect. */
function decideAccess(config: BoxConfig, state: BoxState, conditions: BoxConditions, body: AccessBody, outcome: Outcome): void {
  const max = config.direction === 'entrance' ? body.maxEntries : body.maxExits;
  const entry = state.tries.get(outcome.keyId);
  const counted = entry === undefined ? 0 : entry.count;
  const skew = skewOf(config);
  const now = conditions.boxTime;
  // Until step 9 counts this try, `remaining` shows the unchanged count.
  outcome.remaining = max > counted ? max - counted : 0;

  // Step 7: validity window, with skew.
  if (now < body.notBefore - skew) {
    outcome.status = Status.NOT_YET_VALID;
    return;
  }
  if (now > body.notAfter + skew) {
    outcome.status = Status.EXPIRED;
    return;
  }
  // Step 8: this box is in the module list.
  if (!body.moduleIds.includes(config.moduleId)) {
    outcome.status = Status.WRONG_MODULE;
    return;
  }
  // Step 9: tries in this box's direction; a try that passed 1..8 counts.
  if (counted >= max) {
    outcome.status = Status.NO_TRIES_LEFT;
    outcome.remaining = 0;
    return;
  }
  const tries = new Map(state.tries);
  tries.set(outcome.keyId, { count: counted + 1, notAfter: entry === undefined || entry.notAfter < body.notAfter ? body.notAfter : entry.notAfter });
  outcome.tries = tries;
  outcome.remaining = max - counted - 1;
  // Step 10: battery.
  if (conditions.batteryMv < config.minBatteryMv) {
    outcome.status = Status.LOW_BATTERY;
    return;
  }
  // Step 11: the barrier moves, else BARRIER_FAULT.
  if (conditions.jammed) {
    outcome.status = Status.BARRIER_FAULT;
    outcome.barrier = Barrier.FAULT;
    outcome.effect = FAULT;
    return;
  }
  outcome.status = Status.OK;
  outcome.barrier = conditions.barrier === Barrier.OPEN ? Barrier.OPEN : Barrier.OPENING;
  outcome.effect = OPEN;
}

/** A status report (PROTOCOL.md, serial link framing, type 0x82): status OK,
 * kind 0, key_id 0, remaining 0xFF, the box's own direction, the next
 * box_seq, and a tag over 12 zero bytes of command AAD. */
export function statusReport(config: BoxConfig, state: BoxState, conditions: BoxConditions): StatusReport {
  const boxSeq = nextBoxSeq(state);
  const fields: ResponseFields = {
    status: Status.OK,
    kind: 0,
    moduleId: config.moduleId,
    keyId: 0,
    boxSeq,
    boxTime: conditions.boxTime,
    batteryMv: conditions.batteryMv,
    barrier: conditions.barrier,
    direction: directionByte(config.direction),
    remaining: REMAINING_NOT_APPLICABLE,
  };
  return { fields, response: sealResponse(fields, config.boxKey, null), state: { ...state, boxSeq } };
}
