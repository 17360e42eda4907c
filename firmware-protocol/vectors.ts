// Generates test-vectors.json deterministically: fixed keys, nonces and
// times, so regenerating gives identical bytes (PROTOCOL.md, test vectors).
import { Barrier, FrameKind, LinkType, Status, type StatusName, statusName } from './constants.js';
import type { AccessBody } from './command-body.js';
import { sealCommand, sealRawCommand } from './command.js';
import { crc16 } from './crc16.js';
import { type BoxConditions, type BoxConfig, type BoxState } from './box.js';
import { decide } from './decide.js';
import { encodeLinkFrame } from './link-frame.js';
import { type ResponseFields, sealResponseWithCommandNonce } from './response.js';
import {
  type CommandVector,
  type DecisionVector,
  type LinkFrameVector,
  type ResponseVector,
  type TestVectors,
  accessBodyToJson,
  responseFieldsToJson,
} from './vector-format.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
/** 16 or 12 bytes counting up from `first`: readable, fixed test material. */
const counting = (first: number, length: number): Buffer => Buffer.from(Array.from({ length }, (_, i) => (first + i) & 0xff));

export const VECTOR_KEYS = {
  parkingKey: counting(0x00, 16),
  parkingKeyNext: counting(0x10, 16),
  boxKey: counting(0xa0, 16),
} as const;

/** 2026-01-01T00:00:00Z. */
const T0 = 1_767_225_600;
const HOUR = 3600;
const nonce = (n: number): Buffer => counting(0xc0 + n * 0x10, 12);

const MODULE_ID = 101;
const PARKING_ID = 7;

const access1: AccessBody = { notBefore: T0, notAfter: T0 + 2 * HOUR, maxEntries: 1, maxExits: 1, moduleIds: [MODULE_ID] };
const access32: AccessBody = {
  notBefore: T0,
  notAfter: T0 + 30 * 24 * HOUR,
  maxEntries: 3,
  maxExits: 2,
  moduleIds: Array.from({ length: 32 }, (_, i) => 100 + i),
};

function commandVectors(): { vectors: CommandVector[]; bytes: Map<string, Buffer> } {
  const bytes = new Map<string, Buffer>();
  const vectors: CommandVector[] = [];
  const add = (name: string, key: Buffer, built: Buffer, rest: Omit<CommandVector, 'name' | 'key' | 'bytes'>): void => {
    bytes.set(name, built);
    vectors.push({ name, key: hex(key), ...rest, bytes: hex(built) });
  };
  const { parkingKey, parkingKeyNext, boxKey } = VECTOR_KEYS;
  add('ACCESS, 1 module', parkingKey, sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 42, scope: PARKING_ID, nonce: nonce(0), body: access1 }), {
    kind: FrameKind.ACCESS, key_id: 42, scope: PARKING_ID, nonce: hex(nonce(0)), body: accessBodyToJson(access1),
  });
  add('ACCESS, 32 modules', parkingKey, sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 0xfffffffe, scope: PARKING_ID, nonce: nonce(1), body: access32 }), {
    kind: FrameKind.ACCESS, key_id: 0xfffffffe, scope: PARKING_ID, nonce: hex(nonce(1)), body: accessBodyToJson(access32),
  });
  add('ACCESS under the next parking key', parkingKeyNext, sealCommand({ key: parkingKeyNext, kind: FrameKind.ACCESS, keyId: 43, scope: PARKING_ID, nonce: nonce(2), body: access1 }), {
    kind: FrameKind.ACCESS, key_id: 43, scope: PARKING_ID, nonce: hex(nonce(2)), body: accessBodyToJson(access1),
  });
  add('BATTERY_QUERY', boxKey, sealCommand({ key: boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 5, scope: MODULE_ID, nonce: nonce(3) }), {
    kind: FrameKind.BATTERY_QUERY, key_id: 5, scope: MODULE_ID, nonce: hex(nonce(3)), body: {},
  });
  add('TIME_SET', boxKey, sealCommand({ key: boxKey, kind: FrameKind.TIME_SET, keyId: 6, scope: MODULE_ID, nonce: nonce(4), body: { time: T0 + HOUR } }), {
    kind: FrameKind.TIME_SET, key_id: 6, scope: MODULE_ID, nonce: hex(nonce(4)), body: { time: T0 + HOUR },
  });
  return { vectors, bytes };
}

const baseFields: ResponseFields = {
  status: Status.OK,
  kind: FrameKind.ACCESS,
  moduleId: MODULE_ID,
  keyId: 42,
  boxSeq: 1,
  boxTime: T0 + 60,
  batteryMv: 3700,
  barrier: Barrier.CLOSED,
  direction: 1,
  remaining: 0xff,
};

/** One response per status code, plus a status report and a control answer. */
function responseVectors(): ResponseVector[] {
  const perStatus: Record<StatusName, Partial<ResponseFields>> = {
    OK: { barrier: Barrier.OPENING, remaining: 0 },
    NOT_YET_VALID: { remaining: 1 },
    EXPIRED: { remaining: 1 },
    NO_TRIES_LEFT: { remaining: 0 },
    WRONG_MODULE: { remaining: 1 },
    WRONG_PARKING: {},
    REPLAY: { kind: FrameKind.TIME_SET, keyId: 6, direction: 0 },
    AUTH_FAILED: {},
    MALFORMED: { kind: 0, keyId: 0 },
    UNSUPPORTED_VERSION: { kind: 0, keyId: 0 },
    BARRIER_FAULT: { barrier: Barrier.FAULT, remaining: 0 },
    LOW_BATTERY: { batteryMv: 3100, remaining: 0 },
  };
  const vectors: ResponseVector[] = [];
  let seq = 1;
  for (const [name, overrides] of Object.entries(perStatus) as [StatusName, Partial<ResponseFields>][]) {
    const fields: ResponseFields = { ...baseFields, boxSeq: seq, boxTime: T0 + 60 * seq, ...overrides, status: Status[name] };
    const commandNonce = name === 'UNSUPPORTED_VERSION' ? Buffer.alloc(12) : nonce(seq % 8);
    vectors.push({
      name: name === 'UNSUPPORTED_VERSION' ? `${name} (command shorter than 22 bytes: zero AAD)` : name,
      box_key: hex(VECTOR_KEYS.boxKey),
      command_nonce: hex(commandNonce),
      fields: responseFieldsToJson(fields),
      bytes: hex(sealResponseWithCommandNonce(fields, VECTOR_KEYS.boxKey, commandNonce)),
    });
    seq++;
  }
  const timeSet: ResponseFields = { ...baseFields, kind: FrameKind.TIME_SET, keyId: 6, boxSeq: seq, boxTime: T0 + HOUR, direction: 0 };
  vectors.push({ name: 'OK TIME_SET (box_time is the new time)', box_key: hex(VECTOR_KEYS.boxKey), command_nonce: hex(nonce(4)), fields: responseFieldsToJson(timeSet), bytes: hex(sealResponseWithCommandNonce(timeSet, VECTOR_KEYS.boxKey, nonce(4))) });
  seq++;
  const report: ResponseFields = { ...baseFields, kind: 0, keyId: 0, boxSeq: seq, remaining: 0xff };
  vectors.push({ name: 'status report', box_key: hex(VECTOR_KEYS.boxKey), command_nonce: hex(Buffer.alloc(12)), fields: responseFieldsToJson(report), bytes: hex(sealResponseWithCommandNonce(report, VECTOR_KEYS.boxKey, Buffer.alloc(12))) });
  return vectors;
}

function linkFrameVectors(commands: Map<string, Buffer>, responses: ResponseVector[]): LinkFrameVector[] {
  const frame = (name: string, type: LinkType, payload: Buffer): LinkFrameVector => ({ name, type, payload: hex(payload), bytes: hex(encodeLinkFrame(type, payload)) });
  const okResponse = Buffer.from(responses.find((r) => r.name === 'OK')?.bytes ?? '', 'hex');
  const report = Buffer.from(responses.find((r) => r.name === 'status report')?.bytes ?? '', 'hex');
  return [
    frame('command: ACCESS, 1 module', LinkType.COMMAND, commands.get('ACCESS, 1 module') ?? Buffer.alloc(0)),
    frame('command: ACCESS, 32 modules (the longest frame)', LinkType.COMMAND, commands.get('ACCESS, 32 modules') ?? Buffer.alloc(0)),
    frame('status request', LinkType.STATUS_REQUEST, Buffer.alloc(0)),
    frame('response: OK', LinkType.RESPONSE, okResponse),
    frame('status report', LinkType.STATUS_REPORT, report),
  ];
}

const boxConfig: BoxConfig = {
  moduleId: MODULE_ID,
  parkingId: PARKING_ID,
  direction: 'entrance',
  parkingKey: VECTOR_KEYS.parkingKey,
  parkingKeyNext: VECTOR_KEYS.parkingKeyNext,
  boxKey: VECTOR_KEYS.boxKey,
  skewSeconds: 120,
  minBatteryMv: 3300,
};
const boxState: BoxState = { boxSeq: 10, lastControlSeq: 5, tries: new Map() };
const boxConditions: BoxConditions = { boxTime: T0 + 60, batteryMv: 3700, barrier: Barrier.CLOSED, jammed: false };

interface DecisionCase {
  name: string;
  step: number;
  command: Buffer;
  config?: Partial<BoxConfig>;
  state?: Partial<BoxState>;
  conditions?: Partial<BoxConditions>;
}

/** Cases for each check of PROTOCOL.md, in order, and for the order itself. */
export function decisionCases(): DecisionCase[] {
  const { parkingKey, parkingKeyNext, boxKey } = VECTOR_KEYS;
  const access = (body: AccessBody, overrides: { keyId?: number; scope?: number; key?: Buffer; n?: number } = {}): Buffer =>
    sealCommand({ key: overrides.key ?? parkingKey, kind: FrameKind.ACCESS, keyId: overrides.keyId ?? 42, scope: overrides.scope ?? PARKING_ID, nonce: nonce(overrides.n ?? 0), body });
  const timeSet = (keyId: number, scope = MODULE_ID, key = boxKey): Buffer =>
    sealCommand({ key, kind: FrameKind.TIME_SET, keyId, scope, nonce: nonce(4), body: { time: T0 + HOUR } });
  const ok = access(access1);
  const withByte = (frame: Buffer, offset: number, value: number): Buffer => {
    const copy = Buffer.from(frame);
    copy[offset] = value;
    return copy;
  };
  return [
    { name: 'empty frame', step: 1, command: Buffer.alloc(0) },
    { name: 'version 0x02', step: 1, command: withByte(ok, 0, 0x02) },
    { name: '29 bytes: header not whole', step: 2, command: ok.subarray(0, 29) },
    { name: 'unknown kind 0x04', step: 2, command: withByte(ok, 1, 0x04) },
    { name: 'ACCESS for another parking (and under a wrong key: scope comes first)', step: 3, command: access(access1, { scope: 8, key: boxKey }) },
    { name: 'TIME_SET for another module', step: 3, command: timeSet(6, 102) },
    { name: 'ACCESS under a wrong key', step: 4, command: access(access1, { key: boxKey }) },
    { name: 'ACCESS of 30 bytes or more, cut short', step: 4, command: ok.subarray(0, ok.length - 1) },
    { name: 'TIME_SET under the parking key', step: 4, command: timeSet(6, MODULE_ID, parkingKey) },
    {
      name: 'ACCESS with module_count 0',
      step: 5,
      command: sealRawCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 42, scope: PARKING_ID, nonce: nonce(5), plaintext: Buffer.from('6955b9006955d520010100', 'hex') }),
    },
    {
      name: 'BATTERY_QUERY with a 1-byte body',
      step: 5,
      command: sealRawCommand({ key: boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 6, scope: MODULE_ID, nonce: nonce(5), plaintext: Buffer.from([0]) }),
    },
    { name: 'TIME_SET with the last accepted sequence', step: 6, command: timeSet(5) },
    { name: 'TIME_SET accepted despite a low battery and a jammed barrier', step: 6, command: timeSet(6), conditions: { batteryMv: 3000, jammed: true } },
    { name: 'ACCESS 121 s before not_before', step: 7, command: ok, conditions: { boxTime: T0 - 121 } },
    { name: 'ACCESS exactly skew before not_before is valid', step: 11, command: ok, conditions: { boxTime: T0 - 120 } },
    { name: 'ACCESS 121 s after not_after (and low battery: the window comes first)', step: 7, command: ok, conditions: { boxTime: T0 + 2 * HOUR + 121, batteryMv: 3000 } },
    { name: 'ACCESS whose module list lacks this box', step: 8, command: access({ ...access1, moduleIds: [102, 103] }) },
    { name: 'ACCESS of a key that used its tries (and low battery: tries come first)', step: 9, command: ok, state: { tries: new Map([[42, { count: 1, notAfter: T0 + 2 * HOUR }]]) }, conditions: { batteryMv: 3000 } },
    { name: 'ACCESS with a battery below the minimum', step: 10, command: ok, conditions: { batteryMv: 3299 } },
    { name: 'ACCESS with a jammed barrier', step: 11, command: ok, conditions: { jammed: true } },
    { name: 'ACCESS accepted', step: 11, command: ok },
    { name: 'ACCESS accepted under parking_key_next', step: 11, command: access(access1, { key: parkingKeyNext, keyId: 43, n: 2 }) },
    { name: 'ACCESS at an exit box with max_exits 0', step: 9, command: access({ ...access1, maxExits: 0 }), config: { direction: 'exit' } },
  ];
}

function decisionVectors(): DecisionVector[] {
  return decisionCases().map((c) => {
    const config = { ...boxConfig, ...c.config };
    const state = { ...boxState, ...c.state };
    const conditions = { ...boxConditions, ...c.conditions };
    const decision = decide(config, state, conditions, c.command);
    return {
      name: c.name,
      step: c.step,
      config: {
        module_id: config.moduleId,
        parking_id: config.parkingId,
        direction: config.direction,
        parking_key: hex(config.parkingKey),
        parking_key_next: config.parkingKeyNext === null ? null : hex(config.parkingKeyNext),
        box_key: hex(config.boxKey),
        skew_seconds: config.skewSeconds ?? 120,
        min_battery_mv: config.minBatteryMv,
      },
      state: {
        box_seq: state.boxSeq,
        last_control_seq: state.lastControlSeq,
        tries: [...state.tries].map(([keyId, t]) => ({ key_id: keyId, count: t.count, not_after: t.notAfter })),
      },
      conditions: { box_time: conditions.boxTime, battery_mv: conditions.batteryMv, barrier: conditions.barrier, jammed: conditions.jammed },
      command: hex(c.command),
      expected: { status: decision.status, status_name: statusName(decision.status) ?? '?', response: hex(decision.response) },
    };
  });
}

function crcVectors(): TestVectors['crc16'] {
  return [
    { name: 'check value', input_ascii: '123456789', crc: crcHex('123456789') },
    { name: 'empty input', input_ascii: '', crc: crcHex('') },
    { name: 'one letter', input_ascii: 'A', crc: crcHex('A') },
  ];
}
const crcHex = (ascii: string): string => crc16(Buffer.from(ascii, 'ascii')).toString(16).padStart(4, '0');

/** The whole vector file, as an object. Deterministic. */
export function generateTestVectors(): TestVectors {
  const { vectors: commands, bytes } = commandVectors();
  const responses = responseVectors();
  return { version: 1, crc16: crcVectors(), commands, responses, link_frames: linkFrameVectors(bytes, responses), decisions: decisionVectors() };
}

/** The file's text: two-space JSON and a final newline. */
export function testVectorsJson(): string {
  return `${JSON.stringify(generateTestVectors(), null, 2)}\n`;
}
