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

interface Outcome {
  status: Status;
  kind?: number;
  keyId?: number;
  remaining?: number;
  direction?: Direction;
  boxTime?: number;
  barrier?: Barrier;
  tries?: ReadonlyMap<number, KeyTries>;
  lastControlSeq?: number;
  effect?: Effect;
  command?: OpenedCommand | null;
}

function nextBoxSeq(state: BoxState): number {
  // PROTOCOL.md, response frame, offset 11: strictly increasing over the box's life.
  if (state.boxSeq >= LIMITS.U32_MAX) throw new ProtocolError(ProtocolErrorCode.BOX_SEQ_EXHAUSTED, 'box_seq cannot increase past 0xFFFFFFFF');
  return state.boxSeq + 1;
}

/** Runs PROTOCOL.md's checks on `commandBytes` in order; the first that fails
 * gives the status. Every command gets exactly one response. */
export function decide(config: BoxConfig, state: BoxState, conditions: BoxConditions, commandBytes: Uint8Array): Decision {
  const answer = (outcome: Outcome): Decision => {
    const boxSeq = nextBoxSeq(state);
    const fields: ResponseFields = {
      status: outcome.status,
      kind: outcome.kind ?? 0,
      moduleId: config.moduleId,
      keyId: outcome.keyId ?? 0,
      boxSeq,
      boxTime: outcome.boxTime ?? conditions.boxTime,
      batteryMv: conditions.batteryMv,
      barrier: outcome.barrier ?? conditions.barrier,
      direction: outcome.direction ?? directionByte(config.direction),
      remaining: outcome.remaining ?? REMAINING_NOT_APPLICABLE,
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
  };

  // Steps 1 and 2: version, whole header, known kind; else kind and key_id answer 0.
  const parsed = parseCommandHeader(commandBytes);
  if (!parsed.ok) return answer({ status: parsed.status });
  const { header } = parsed;
  const control = isControlKind(header.kind);
  // PROTOCOL.md, response frame, offset 22: 0 for a control kind.
  const echo = { kind: header.kind, keyId: header.keyId, direction: control ? Direction.CONTROL : directionByte(config.direction) };

  // Step 3: scope.
  if (header.kind === FrameKind.ACCESS) {
    if (header.scope !== config.parkingId) return answer({ ...echo, status: Status.WRONG_PARKING });
  } else if (header.scope !== config.moduleId) {
    return answer({ ...echo, status: Status.WRONG_MODULE });
  }

  // Step 4: the tag, under K_park (then the next K_park) for ACCESS, K_box for control kinds.
  const keys = control ? [config.boxKey] : config.parkingKeyNext === null ? [config.parkingKey] : [config.parkingKey, config.parkingKeyNext];
  const opened = authenticateCommand(commandBytes, header, keys);
  if (opened === null) return answer({ ...echo, status: Status.AUTH_FAILED });

  // Step 5: the body's length.
  const body = decodeBody(header.kind, opened.plaintext);
  if (body === null) return answer({ ...echo, status: Status.MALFORMED });
  const command = { kind: header.kind, keyId: header.keyId, scope: header.scope, body, nonce: Buffer.from(header.nonce) } as OpenedCommand;

  if (command.kind !== FrameKind.ACCESS) {
    // Step 6: control sequence, then done (battery and barrier do not refuse a control command).
    if (header.keyId <= state.lastControlSeq) return answer({ ...echo, status: Status.REPLAY, command });
    if (command.kind === FrameKind.TIME_SET) {
      const time = command.body.time;
      // TIME_SET sets the clock first: the response carries the new time.
      return answer({ ...echo, status: Status.OK, boxTime: time, lastControlSeq: header.keyId, effect: { type: 'setTime', time }, command });
    }
    return answer({ ...echo, status: Status.OK, lastControlSeq: header.keyId, command });
  }
  return decideAccess(config, state, conditions, command.body, { ...echo, command }, answer);
}

/** Steps 7..11 of an ACCESS command whose tag and body passed. */
function decideAccess(
  config: BoxConfig,
  state: BoxState,
  conditions: BoxConditions,
  body: AccessBody,
  echo: Omit<Outcome, 'status'>,
  answer: (outcome: Outcome) => Decision,
): Decision {
  const keyId = echo.keyId ?? 0;
  const max = config.direction === 'entrance' ? body.maxEntries : body.maxExits;
  const entry = state.tries.get(keyId);
  const counted = entry?.count ?? 0;
  const left = (count: number): number => Math.max(0, max - count);
  const skew = skewOf(config);
  const now = conditions.boxTime;

  // Step 7: validity window, with skew.
  if (now < body.notBefore - skew) return answer({ ...echo, status: Status.NOT_YET_VALID, remaining: left(counted) });
  if (now > body.notAfter + skew) return answer({ ...echo, status: Status.EXPIRED, remaining: left(counted) });
  // Step 8: this box is in the module list.
  if (!body.moduleIds.includes(config.moduleId)) return answer({ ...echo, status: Status.WRONG_MODULE, remaining: left(counted) });
  // Step 9: tries in this box's direction; a try that passed 1..8 counts.
  if (counted >= max) return answer({ ...echo, status: Status.NO_TRIES_LEFT, remaining: 0 });
  const count = counted + 1;
  const tries = new Map(state.tries);
  tries.set(keyId, { count, notAfter: Math.max(entry?.notAfter ?? 0, body.notAfter) });
  const remaining = left(count);
  // Step 10: battery.
  if (conditions.batteryMv < config.minBatteryMv) return answer({ ...echo, status: Status.LOW_BATTERY, remaining, tries });
  // Step 11: the barrier moves, else BARRIER_FAULT.
  if (conditions.jammed) return answer({ ...echo, status: Status.BARRIER_FAULT, remaining, tries, barrier: Barrier.FAULT, effect: FAULT });
  const barrier = conditions.barrier === Barrier.OPEN ? Barrier.OPEN : Barrier.OPENING;
  return answer({ ...echo, status: Status.OK, remaining, tries, barrier, effect: OPEN });
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
