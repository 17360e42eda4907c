// The box's decision (docs/protocol.md, steps 1..11 with 8a, version 2) as a
// pure function: the reference for firmware, and what the simulator runs. No
// randomness: the response nonce is module_id || box_seq || box_time.
import {
  Barrier,
  Direction,
  FrameKind,
  REMAINING_NOT_APPLICABLE,
  Status,
  U32_MAX,
  isAccessKind,
  isControlKind,
} from './constants.js';
import {
  type BoxConditions,
  type BoxConfig,
  type BoxState,
  type KeyTries,
  directionByte,
  revocationCapacityOf,
  skewOf,
} from './box.js';
import { type CommandHeader, type OpenedCommand, authenticateCommand, parseCommandHeader } from './command.js';
import { type AccessBody, decodeBody } from './command-body.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';
import { applyRevoke, isRevoked } from './revocation.js';
import { type ResponseFields, sealResponse } from './response.js';
import { signedBody, verifySignature } from './signed-command.js';

/** What the box does besides answering. */
export type Effect =
  | { readonly type: 'none' }
  /** ACCESS or ACCESS_SIGNED accepted: open the barrier. */
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
  issuers?: { readonly issuerKey: Uint8Array; readonly issuerKeyPrevious: Uint8Array | null };
  revocations?: ReadonlyMap<number, number>;
  effect?: Effect;
  command?: OpenedCommand;
}

function nextBoxSeq(state: BoxState): number {
  // docs/protocol.md, Response frame, offset 11: strictly increasing over the box's life.
  if (state.boxSeq >= U32_MAX)
    throw new ProtocolError(ProtocolErrorCode.BOX_SEQ_EXHAUSTED, 'box_seq cannot increase past 0xFFFFFFFF');
  return state.boxSeq + 1;
}

/** Seals the one response to `commandBytes` and builds the new state. */
function respond(
  config: BoxConfig,
  state: BoxState,
  conditions: BoxConditions,
  commandBytes: Uint8Array,
  outcome: Outcome,
): Decision {
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
      issuerKey: outcome.issuers === undefined ? state.issuerKey : outcome.issuers.issuerKey,
      issuerKeyPrevious: outcome.issuers === undefined ? state.issuerKeyPrevious : outcome.issuers.issuerKeyPrevious,
      revocations: outcome.revocations ?? state.revocations,
    },
    effect: outcome.effect ?? NO_EFFECT,
    command: outcome.command ?? null,
  };
}

/** docs/protocol.md, step 4: the body bytes when the frame authenticates
 * (ACCESS under K_park then K_park next; control kinds under K_box;
 * ACCESS_SIGNED under issuer_key then issuer_key_previous), else null. A key
 * the box does not hold (null) never verifies. */
function authenticate(
  config: BoxConfig,
  state: BoxState,
  header: CommandHeader,
  commandBytes: Uint8Array,
): Buffer | null {
  if (header.kind === FrameKind.ACCESS_SIGNED) {
    return verifySignature(commandBytes, [state.issuerKey, state.issuerKeyPrevious]) < 0
      ? null
      : signedBody(commandBytes, header);
  }
  const keys = isControlKind(header.kind)
    ? [config.boxKey]
    : [config.parkingKey, config.parkingKeyNext].filter((key): key is Uint8Array => key !== null);
  return authenticateCommand(commandBytes, header, keys)?.plaintext ?? null;
}

/** Runs docs/protocol.md's checks (steps 1..11) on `commandBytes` in order; the first that fails
 * gives the status. Every command gets exactly one response. Pure: the input
 * state is not mutated, and no randomness is used. Never throws on any bytes
 * (only ProtocolError BOX_SEQ_EXHAUSTED when box_seq cannot go up). */
export function decide(
  config: BoxConfig,
  state: BoxState,
  conditions: BoxConditions,
  commandBytes: Uint8Array,
): Decision {
  const ownDirection = directionByte(config.direction);
  // docs/protocol.md, steps 1 and 2: version, known kind, the kind's fixed part; else kind and key_id answer 0.
  const parsed = parseCommandHeader(commandBytes);
  if (!parsed.ok) {
    return respond(config, state, conditions, commandBytes, {
      status: parsed.status,
      kind: 0,
      keyId: 0,
      direction: ownDirection,
      remaining: REMAINING_NOT_APPLICABLE,
    });
  }
  const { header } = parsed;
  const access = isAccessKind(header.kind);
  // docs/protocol.md, Response frame, offset 22: 0 for a control kind.
  const outcome: Outcome = {
    status: Status.OK,
    kind: header.kind,
    keyId: header.keyId,
    direction: access ? ownDirection : Direction.CONTROL,
    remaining: REMAINING_NOT_APPLICABLE,
  };

  // docs/protocol.md, step 3: scope (before any cryptography: a refusal here costs none).
  if (access ? header.scope !== config.parkingId : header.scope !== config.moduleId) {
    outcome.status = access ? Status.WRONG_PARKING : Status.WRONG_MODULE;
    return respond(config, state, conditions, commandBytes, outcome);
  }

  // docs/protocol.md, step 4: the tag, or for ACCESS_SIGNED the signature.
  const plaintext = authenticate(config, state, header, commandBytes);
  if (plaintext === null) {
    outcome.status = Status.AUTH_FAILED;
    return respond(config, state, conditions, commandBytes, outcome);
  }

  // docs/protocol.md, step 5: the body's length (and SET_ISSUER's points).
  const body = decodeBody(header.kind, plaintext);
  if (body === null) {
    outcome.status = Status.MALFORMED;
    return respond(config, state, conditions, commandBytes, outcome);
  }
  const command = {
    kind: header.kind,
    keyId: header.keyId,
    scope: header.scope,
    body,
    nonce: Buffer.from(header.nonce),
  } as OpenedCommand;
  outcome.command = command;

  if (command.kind === FrameKind.ACCESS || command.kind === FrameKind.ACCESS_SIGNED) {
    decideAccess(config, state, conditions, command.body, outcome);
  } else {
    decideControl(config, state, conditions, command, outcome);
  }
  return respond(config, state, conditions, commandBytes, outcome);
}

type ControlCommand = Exclude<OpenedCommand, { kind: typeof FrameKind.ACCESS | typeof FrameKind.ACCESS_SIGNED }>;

/** docs/protocol.md, step 6: the control sequence, then the command is done (battery
 * and barrier do not refuse a control command). */
function decideControl(
  config: BoxConfig,
  state: BoxState,
  conditions: BoxConditions,
  command: ControlCommand,
  outcome: Outcome,
): void {
  if (command.keyId <= state.lastControlSeq) {
    outcome.status = Status.REPLAY;
    return;
  }
  // "from here the sequence counts as accepted, whatever follows" (REVOCATION_FULL included).
  outcome.lastControlSeq = command.keyId;
  switch (command.kind) {
    case FrameKind.BATTERY_QUERY:
      return;
    case FrameKind.TIME_SET:
      // TIME_SET sets the clock first: the response carries the new time.
      outcome.boxTime = command.body.time;
      outcome.effect = { type: 'setTime', time: command.body.time };
      return;
    case FrameKind.SET_ISSUER:
      // "SET_ISSUER replaces both issuer keys" at once.
      outcome.issuers = { issuerKey: command.body.issuerKey, issuerKeyPrevious: command.body.issuerKeyPrevious };
      return;
    case FrameKind.REVOKE: {
      const list = applyRevoke(
        state.revocations,
        command.body.entries,
        conditions.boxTime,
        skewOf(config),
        revocationCapacityOf(config),
      );
      if (list === null)
        outcome.status = Status.REVOCATION_FULL; // "the list is as it was"
      else outcome.revocations = list;
      return;
    }
  }
}

/** docs/protocol.md, steps 7..11 (with 8a) of an access kind whose tag or signature
 * and body passed: sets the outcome's status, remaining, tries, barrier and
 * effect. Tries are counted per key_id, whichever access kind carried it. */
function decideAccess(
  config: BoxConfig,
  state: BoxState,
  conditions: BoxConditions,
  body: AccessBody,
  outcome: Outcome,
): void {
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
  // docs/protocol.md, step 8a: a live revocation refuses, and spends no try.
  if (isRevoked(state.revocations, outcome.keyId, now, skew)) {
    outcome.status = Status.REVOKED;
    return;
  }
  // Step 9: tries in this box's direction; a try that passed 1..8a counts.
  if (counted >= max) {
    outcome.status = Status.NO_TRIES_LEFT;
    outcome.remaining = 0;
    return;
  }
  const tries = new Map(state.tries);
  tries.set(outcome.keyId, {
    count: counted + 1,
    notAfter: entry === undefined || entry.notAfter < body.notAfter ? body.notAfter : entry.notAfter,
  });
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

/** A status report (docs/protocol.md, Serial link framing, type 0x82): status OK,
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
