// Generates test-vectors.json deterministically: fixed keys, nonces and
// times, so regenerating gives identical bytes (docs/protocol.md, Test vectors).
// Signed vectors use RFC 6979 deterministic signatures for the same reason.
import { Barrier, FrameKind, LinkType, Status, type StatusName, statusName } from './constants.js';
import { type AccessBody, encodeAccessBody } from './command-body.js';
import { sealCommand, sealRawCommand } from './command.js';
import { MIN_BLE_MTU, chunkFrame } from './ble.js';
import { crc16 } from './crc16.js';
import { type BoxConditions, type BoxConfig, type BoxState } from './box.js';
import { decide } from './decide.js';
import { echoIsAuthenticated } from './answer-trust.js';
import { issuerPublicKeyOf } from './issuer-keys.js';
import { encodeLinkFrame } from './link-frame.js';
import { P256, bigIntToBytes, mod, powMod } from './p256.js';
import { type ResponseFields, sealResponseWithCommandNonce } from './response.js';
import { signDeterministic } from './rfc6979.js';
import { assembleSignedFrame } from './signed-command.js';
import {
  type BleChunksVector,
  type CommandVector,
  type DecisionVector,
  type IssuerVector,
  type LinkFrameVector,
  type ResponseVector,
  type SignedCommandVector,
  type TestVectors,
  accessBodyToJson,
  boxStateToJson,
  responseFieldsToJson,
  revokeBodyToJson,
  setIssuerBodyToJson,
} from './vector-format.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
/** 16 or 12 bytes counting up from `first`: readable, fixed test material. */
const counting = (first: number, length: number): Buffer =>
  Buffer.from(Array.from({ length }, (_, i) => (first + i) & 0xff));

export const VECTOR_KEYS = {
  parkingKey: counting(0x00, 16),
  parkingKeyNext: counting(0x10, 16),
  boxKey: counting(0xa0, 16),
} as const;

/** Two issuer key pairs (docs/protocol.md, Test vectors, `issuers`): scalars 01..20 and 41..60. */
const ISSUER_PRIVATE = [counting(0x01, 32), counting(0x41, 32)] as const;
export const VECTOR_ISSUERS = ISSUER_PRIVATE.map((privateKey) => ({
  privateKey,
  publicKey: issuerPublicKeyOf(privateKey),
}));
const issuerPublic = (index: 0 | 1): Buffer => VECTOR_ISSUERS[index]?.publicKey ?? Buffer.alloc(64);
const issuerPrivate = (index: 0 | 1): Buffer => ISSUER_PRIVATE[index];

/** An ACCESS_SIGNED (or any body under any kind byte) with an RFC 6979 signature. */
function signedFrame(
  issuer: 0 | 1,
  keyId: number,
  scope: number,
  n: number,
  body: Uint8Array,
  kind: number = FrameKind.ACCESS_SIGNED,
): Buffer {
  return assembleSignedFrame({ kind, keyId, scope, nonce: nonce(n), body }, (message) =>
    signDeterministic(issuerPrivate(issuer), message),
  );
}

/** 2026-01-01T00:00:00Z. */
const T0 = 1_767_225_600;
const HOUR = 3600;
const nonce = (n: number): Buffer => counting(0xc0 + n * 0x10, 12);

const MODULE_ID = 101;
const PARKING_ID = 7;

const access1: AccessBody = {
  notBefore: T0,
  notAfter: T0 + 2 * HOUR,
  maxEntries: 1,
  maxExits: 1,
  moduleIds: [MODULE_ID],
};
const revoke1 = { entries: [{ keyId: 42, until: T0 + 2 * HOUR }] };
const revoke16 = { entries: Array.from({ length: 16 }, (_, i) => ({ keyId: 1000 + i, until: T0 + (i + 1) * HOUR })) };
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
  add(
    'ACCESS, 1 module',
    parkingKey,
    sealCommand({
      key: parkingKey,
      kind: FrameKind.ACCESS,
      keyId: 42,
      scope: PARKING_ID,
      nonce: nonce(0),
      body: access1,
    }),
    {
      kind: FrameKind.ACCESS,
      key_id: 42,
      scope: PARKING_ID,
      nonce: hex(nonce(0)),
      body: accessBodyToJson(access1),
    },
  );
  add(
    'ACCESS, 32 modules',
    parkingKey,
    sealCommand({
      key: parkingKey,
      kind: FrameKind.ACCESS,
      keyId: 0xfffffffe,
      scope: PARKING_ID,
      nonce: nonce(1),
      body: access32,
    }),
    {
      kind: FrameKind.ACCESS,
      key_id: 0xfffffffe,
      scope: PARKING_ID,
      nonce: hex(nonce(1)),
      body: accessBodyToJson(access32),
    },
  );
  add(
    'ACCESS under the next parking key',
    parkingKeyNext,
    sealCommand({
      key: parkingKeyNext,
      kind: FrameKind.ACCESS,
      keyId: 43,
      scope: PARKING_ID,
      nonce: nonce(2),
      body: access1,
    }),
    {
      kind: FrameKind.ACCESS,
      key_id: 43,
      scope: PARKING_ID,
      nonce: hex(nonce(2)),
      body: accessBodyToJson(access1),
    },
  );
  add(
    'BATTERY_QUERY',
    boxKey,
    sealCommand({ key: boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 5, scope: MODULE_ID, nonce: nonce(3) }),
    {
      kind: FrameKind.BATTERY_QUERY,
      key_id: 5,
      scope: MODULE_ID,
      nonce: hex(nonce(3)),
      body: {},
    },
  );
  add(
    'TIME_SET',
    boxKey,
    sealCommand({
      key: boxKey,
      kind: FrameKind.TIME_SET,
      keyId: 6,
      scope: MODULE_ID,
      nonce: nonce(4),
      body: { time: T0 + HOUR },
    }),
    {
      kind: FrameKind.TIME_SET,
      key_id: 6,
      scope: MODULE_ID,
      nonce: hex(nonce(4)),
      body: { time: T0 + HOUR },
    },
  );
  add(
    'REVOKE, 1 entry',
    boxKey,
    sealCommand({ key: boxKey, kind: FrameKind.REVOKE, keyId: 7, scope: MODULE_ID, nonce: nonce(5), body: revoke1 }),
    {
      kind: FrameKind.REVOKE,
      key_id: 7,
      scope: MODULE_ID,
      nonce: hex(nonce(5)),
      body: revokeBodyToJson(revoke1),
    },
  );
  add(
    'REVOKE, 16 entries',
    boxKey,
    sealCommand({ key: boxKey, kind: FrameKind.REVOKE, keyId: 8, scope: MODULE_ID, nonce: nonce(6), body: revoke16 }),
    {
      kind: FrameKind.REVOKE,
      key_id: 8,
      scope: MODULE_ID,
      nonce: hex(nonce(6)),
      body: revokeBodyToJson(revoke16),
    },
  );
  const rotate = { issuerKey: issuerPublic(1), issuerKeyPrevious: issuerPublic(0) };
  add(
    'SET_ISSUER with a previous key (issuer 1, previous issuer 0)',
    boxKey,
    sealCommand({ key: boxKey, kind: FrameKind.SET_ISSUER, keyId: 9, scope: MODULE_ID, nonce: nonce(7), body: rotate }),
    {
      kind: FrameKind.SET_ISSUER,
      key_id: 9,
      scope: MODULE_ID,
      nonce: hex(nonce(7)),
      body: setIssuerBodyToJson(rotate),
    },
  );
  const only = { issuerKey: issuerPublic(1), issuerKeyPrevious: null };
  add(
    'SET_ISSUER without a previous key (issuer 1, none)',
    boxKey,
    sealCommand({ key: boxKey, kind: FrameKind.SET_ISSUER, keyId: 10, scope: MODULE_ID, nonce: nonce(8), body: only }),
    {
      kind: FrameKind.SET_ISSUER,
      key_id: 10,
      scope: MODULE_ID,
      nonce: hex(nonce(8)),
      body: setIssuerBodyToJson(only),
    },
  );
  return { vectors, bytes };
}

function issuerVectors(): IssuerVector[] {
  return VECTOR_ISSUERS.map((issuer, i) => ({
    name: `issuer ${i}`,
    private_key: hex(issuer.privateKey),
    public_key: hex(issuer.publicKey),
  }));
}

function signedCommandVectors(bytes: Map<string, Buffer>): SignedCommandVector[] {
  const cases: { name: string; issuer: 0 | 1; keyId: number; n: number; body: AccessBody }[] = [
    { name: 'ACCESS_SIGNED, 1 module, by issuer 0', issuer: 0, keyId: 42, n: 9, body: access1 },
    { name: 'ACCESS_SIGNED, 32 modules, by issuer 1', issuer: 1, keyId: 0xfffffffe, n: 10, body: access32 },
  ];
  return cases.map((c) => {
    const frame = signedFrame(c.issuer, c.keyId, PARKING_ID, c.n, encodeAccessBody(c.body));
    bytes.set(c.name, frame);
    return {
      name: c.name,
      issuer: c.issuer,
      kind: FrameKind.ACCESS_SIGNED,
      key_id: c.keyId,
      scope: PARKING_ID,
      nonce: hex(nonce(c.n)),
      body: accessBodyToJson(c.body),
      bytes: hex(frame),
    };
  });
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
    REVOKED: { kind: FrameKind.ACCESS_SIGNED, remaining: 1 },
    AUTH_FAILED: {},
    MALFORMED: { kind: 0, keyId: 0 },
    UNSUPPORTED_VERSION: { kind: 0, keyId: 0 },
    BARRIER_FAULT: { barrier: Barrier.FAULT, remaining: 0 },
    LOW_BATTERY: { batteryMv: 3100, remaining: 0 },
    REVOCATION_FULL: { kind: FrameKind.REVOKE, keyId: 7, direction: 0 },
  };
  const vectors: ResponseVector[] = [];
  let seq = 1;
  for (const [name, overrides] of Object.entries(perStatus) as [StatusName, Partial<ResponseFields>][]) {
    const fields: ResponseFields = {
      ...baseFields,
      boxSeq: seq,
      boxTime: T0 + 60 * seq,
      ...overrides,
      status: Status[name],
    };
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
  const timeSet: ResponseFields = {
    ...baseFields,
    kind: FrameKind.TIME_SET,
    keyId: 6,
    boxSeq: seq,
    boxTime: T0 + HOUR,
    direction: 0,
  };
  vectors.push({
    name: 'OK TIME_SET (box_time is the new time)',
    box_key: hex(VECTOR_KEYS.boxKey),
    command_nonce: hex(nonce(4)),
    fields: responseFieldsToJson(timeSet),
    bytes: hex(sealResponseWithCommandNonce(timeSet, VECTOR_KEYS.boxKey, nonce(4))),
  });
  seq++;
  const signedOk: ResponseFields = {
    ...baseFields,
    kind: FrameKind.ACCESS_SIGNED,
    boxSeq: seq,
    boxTime: T0 + 60,
    barrier: Barrier.OPENING,
    remaining: 0,
  };
  vectors.push({
    name: 'OK ACCESS_SIGNED',
    box_key: hex(VECTOR_KEYS.boxKey),
    command_nonce: hex(nonce(9)),
    fields: responseFieldsToJson(signedOk),
    bytes: hex(sealResponseWithCommandNonce(signedOk, VECTOR_KEYS.boxKey, nonce(9))),
  });
  seq++;
  const report: ResponseFields = { ...baseFields, kind: 0, keyId: 0, boxSeq: seq, remaining: 0xff };
  vectors.push({
    name: 'status report',
    box_key: hex(VECTOR_KEYS.boxKey),
    command_nonce: hex(Buffer.alloc(12)),
    fields: responseFieldsToJson(report),
    bytes: hex(sealResponseWithCommandNonce(report, VECTOR_KEYS.boxKey, Buffer.alloc(12))),
  });
  return vectors;
}

function linkFrameVectors(commands: Map<string, Buffer>, responses: ResponseVector[]): LinkFrameVector[] {
  const frame = (name: string, type: LinkType, payload: Buffer): LinkFrameVector => ({
    name,
    type,
    payload: hex(payload),
    bytes: hex(encodeLinkFrame(type, payload)),
  });
  const okResponse = Buffer.from(responses.find((r) => r.name === 'OK')?.bytes ?? '', 'hex');
  const report = Buffer.from(responses.find((r) => r.name === 'status report')?.bytes ?? '', 'hex');
  return [
    frame('command: ACCESS, 1 module', LinkType.COMMAND, commands.get('ACCESS, 1 module') ?? Buffer.alloc(0)),
    frame(
      'command: ACCESS, 32 modules (the longest sealed frame)',
      LinkType.COMMAND,
      commands.get('ACCESS, 32 modules') ?? Buffer.alloc(0),
    ),
    frame(
      'command: ACCESS_SIGNED, 32 modules (the longest frame: 225 bytes, 230 on the link)',
      LinkType.COMMAND,
      commands.get('ACCESS_SIGNED, 32 modules, by issuer 1') ?? Buffer.alloc(0),
    ),
    frame('status request', LinkType.STATUS_REQUEST, Buffer.alloc(0)),
    frame('response: OK', LinkType.RESPONSE, okResponse),
    frame('status report', LinkType.STATUS_REPORT, report),
  ];
}

function bleChunkVectors(commands: Map<string, Buffer>, responses: ResponseVector[]): BleChunksVector[] {
  const chunks = (name: string, mtu: number, frame: Buffer): BleChunksVector => ({
    name,
    mtu,
    frame: hex(frame),
    chunks: chunkFrame(frame, mtu).map(hex),
  });
  const longest = commands.get('ACCESS_SIGNED, 32 modules, by issuer 1') ?? Buffer.alloc(0);
  const okResponse = Buffer.from(responses.find((r) => r.name === 'OK')?.bytes ?? '', 'hex');
  return [
    chunks(
      'ACCESS_SIGNED, 32 modules, at the smallest MTU (23): 11 chunks of 19 bytes and one of 16',
      MIN_BLE_MTU,
      longest,
    ),
    chunks('response: OK at MTU 23: 19 bytes, then 13', MIN_BLE_MTU, okResponse),
    chunks('ACCESS_SIGNED, 32 modules, at MTU 247: one chunk', 247, longest),
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
  revocationCapacity: 64,
};
const boxState: BoxState = {
  boxSeq: 10,
  lastControlSeq: 5,
  tries: new Map(),
  issuerKey: issuerPublic(0),
  issuerKeyPrevious: null,
  revocations: new Map(),
};
const boxConditions: BoxConditions = { boxTime: T0 + 60, batteryMv: 3700, barrier: Barrier.CLOSED, jammed: false };

interface DecisionCase {
  name: string;
  step: number | '8a';
  reading?: string;
  command: Buffer;
  config?: Partial<BoxConfig>;
  state?: Partial<BoxState>;
  conditions?: Partial<BoxConditions>;
}

/** Cases for each step of docs/protocol.md's checks, in order, and for the order itself. */
export function decisionCases(): DecisionCase[] {
  const { parkingKey, parkingKeyNext, boxKey } = VECTOR_KEYS;
  const access = (
    body: AccessBody,
    overrides: { keyId?: number; scope?: number; key?: Buffer; n?: number } = {},
  ): Buffer =>
    sealCommand({
      key: overrides.key ?? parkingKey,
      kind: FrameKind.ACCESS,
      keyId: overrides.keyId ?? 42,
      scope: overrides.scope ?? PARKING_ID,
      nonce: nonce(overrides.n ?? 0),
      body,
    });
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
    {
      name: 'kind 0x04 (ACCESS_SIGNED) in a 45-byte frame: under its 86-byte fixed part',
      step: 2,
      command: withByte(ok, 1, 0x04),
    },
    { name: 'unknown kind 0x07', step: 2, command: withByte(ok, 1, 0x07) },
    {
      name: 'ACCESS for another parking (and under a wrong key: scope comes first)',
      step: 3,
      command: access(access1, { scope: 8, key: boxKey }),
    },
    { name: 'TIME_SET for another module', step: 3, command: timeSet(6, 102) },
    { name: 'ACCESS under a wrong key', step: 4, command: access(access1, { key: boxKey }) },
    { name: 'ACCESS of 30 bytes or more, cut short', step: 4, command: ok.subarray(0, ok.length - 1) },
    { name: 'TIME_SET under the parking key', step: 4, command: timeSet(6, MODULE_ID, parkingKey) },
    {
      name: 'ACCESS with module_count 0',
      step: 5,
      command: sealRawCommand({
        key: parkingKey,
        kind: FrameKind.ACCESS,
        keyId: 42,
        scope: PARKING_ID,
        nonce: nonce(5),
        plaintext: Buffer.from('6955b9006955d520010100', 'hex'),
      }),
    },
    {
      name: 'BATTERY_QUERY with a 1-byte body',
      step: 5,
      command: sealRawCommand({
        key: boxKey,
        kind: FrameKind.BATTERY_QUERY,
        keyId: 6,
        scope: MODULE_ID,
        nonce: nonce(5),
        plaintext: Buffer.from([0]),
      }),
    },
    { name: 'TIME_SET with the last accepted sequence', step: 6, command: timeSet(5) },
    {
      name: 'TIME_SET accepted despite a low battery and a jammed barrier',
      step: 6,
      command: timeSet(6),
      conditions: { batteryMv: 3000, jammed: true },
    },
    { name: 'ACCESS 121 s before not_before', step: 7, command: ok, conditions: { boxTime: T0 - 121 } },
    {
      name: 'ACCESS exactly skew before not_before is valid',
      step: 11,
      command: ok,
      conditions: { boxTime: T0 - 120 },
    },
    {
      name: 'ACCESS 121 s after not_after (and low battery: the window comes first)',
      step: 7,
      command: ok,
      conditions: { boxTime: T0 + 2 * HOUR + 121, batteryMv: 3000 },
    },
    {
      name: 'ACCESS whose module list lacks this box',
      step: 8,
      command: access({ ...access1, moduleIds: [102, 103] }),
    },
    {
      name: 'ACCESS of a key that used its tries (and low battery: tries come first)',
      step: 9,
      command: ok,
      state: { tries: new Map([[42, { count: 1, notAfter: T0 + 2 * HOUR }]]) },
      conditions: { batteryMv: 3000 },
    },
    { name: 'ACCESS with a battery below the minimum', step: 10, command: ok, conditions: { batteryMv: 3299 } },
    { name: 'ACCESS with a jammed barrier', step: 11, command: ok, conditions: { jammed: true } },
    { name: 'ACCESS accepted', step: 11, command: ok },
    {
      name: 'ACCESS accepted under parking_key_next',
      step: 11,
      command: access(access1, { key: parkingKeyNext, keyId: 43, n: 2 }),
    },
    {
      name: 'ACCESS at an exit box with max_exits 0',
      step: 9,
      command: access({ ...access1, maxExits: 0 }),
      config: { direction: 'exit' },
    },
    ...versionTwoCases(ok),
  ];
}

/** A 64-byte X || Y whose x is p + x0 for a point (x0, y) of P-256: on the
 * curve modulo p, but x is not a field element (docs/protocol.md, step 5). */
function pointWithCoordinateAboveP(): Buffer {
  const { p, b } = P256;
  for (let x = 1n; ; x++) {
    const rhs = mod(x * x * x - 3n * x + b, p);
    const y = powMod(rhs, (p + 1n) / 4n, p); // p ≡ 3 (mod 4)
    if ((y * y) % p === rhs) return Buffer.concat([bigIntToBytes(x + p, 32), bigIntToBytes(y, 32)]);
  }
}

/** docs/protocol.md version 2: ACCESS_SIGNED, REVOKE, SET_ISSUER, steps 2, 4, 5, 6 and 8a. */
function versionTwoCases(sealedOk: Buffer): DecisionCase[] {
  const { parkingKey, boxKey } = VECTOR_KEYS;
  const signed = (body: AccessBody, o: { issuer?: 0 | 1; keyId?: number; scope?: number; n?: number } = {}): Buffer =>
    signedFrame(o.issuer ?? 0, o.keyId ?? 42, o.scope ?? PARKING_ID, o.n ?? 9, encodeAccessBody(body));
  const control = (kind: number, keyId: number, plaintext: Buffer, key: Buffer = boxKey): Buffer =>
    sealRawCommand({ key, kind, keyId, scope: MODULE_ID, nonce: nonce(6), plaintext });
  const revokeBody = (entries: { keyId: number; until: number }[]): Buffer => {
    const out = Buffer.alloc(1 + 8 * entries.length);
    out[0] = entries.length;
    entries.forEach((e, i) => {
      out.writeUInt32BE(e.keyId, 1 + 8 * i);
      out.writeUInt32BE(e.until, 5 + 8 * i);
    });
    return out;
  };
  const flip = (frame: Buffer, offset: number): Buffer => {
    const copy = Buffer.from(frame);
    copy[offset] = (copy[offset] ?? 0) ^ 0x01;
    return copy;
  };
  const ok = signed(access1);
  const now = boxConditions.boxTime;
  const skew = 120;
  const revoked = (until: number): Partial<BoxState> => ({ revocations: new Map([[42, until]]) });
  /** 64 live entries: a full list. */
  const full = (extra: [number, number][] = []): Partial<BoxState> => ({
    revocations: new Map([
      ...Array.from({ length: 64 - extra.length }, (_, i): [number, number] => [2000 + i, T0 + 24 * HOUR]),
      ...extra,
    ]),
  });
  const zeros = Buffer.alloc(64);
  return [
    { name: 'ACCESS_SIGNED of 85 bytes: under its fixed part', step: 2, command: ok.subarray(0, 85) },
    {
      name: 'ACCESS_SIGNED for another parking (and by an unknown issuer: scope comes first)',
      step: 3,
      command: signed(access1, { scope: 8, issuer: 1 }),
    },
    { name: 'ACCESS_SIGNED accepted', step: 11, command: ok },
    { name: 'ACCESS_SIGNED by an unknown issuer', step: 4, command: signed(access1, { issuer: 1 }) },
    { name: 'ACCESS_SIGNED with a flipped body byte', step: 4, command: flip(ok, 22) },
    { name: 'ACCESS_SIGNED with a flipped nonce byte', step: 4, command: flip(ok, 10) },
    { name: 'ACCESS_SIGNED with a flipped signature byte', step: 4, command: flip(ok, ok.length - 1) },
    {
      name: 'ACCESS_SIGNED with the malleated signature (r, n − s) accepted',
      step: 11,
      reading: 'any valid r || s verifies, high s included: signatures are malleable and nothing keys on their bytes',
      command: Buffer.concat([
        ok.subarray(0, -32),
        bigIntToBytes(P256.n - BigInt(`0x${ok.subarray(-32).toString('hex')}`), 32),
      ]),
    },
    { name: 'ACCESS_SIGNED of 86 bytes or more, cut short', step: 4, command: ok.subarray(0, ok.length - 1) },
    {
      name: 'ACCESS_SIGNED on a box that holds no issuer key',
      step: 4,
      command: ok,
      state: { issuerKey: null, issuerKeyPrevious: null },
    },
    {
      name: 'ACCESS_SIGNED by issuer_key_previous accepted',
      step: 11,
      command: ok,
      state: { issuerKey: issuerPublic(1), issuerKeyPrevious: issuerPublic(0) },
    },
    {
      name: 'ACCESS_SIGNED by the previous issuer after SET_ISSUER(new, none)',
      step: 4,
      command: ok,
      state: { issuerKey: issuerPublic(1), issuerKeyPrevious: null },
    },
    {
      name: 'ACCESS_SIGNED with module_count 0, validly signed',
      step: 5,
      command: signedFrame(0, 42, PARKING_ID, 11, Buffer.from('6955b9006955d520010100', 'hex')),
    },
    {
      name: 'a sealed ACCESS body relabelled ACCESS_SIGNED (a tag is no signature)',
      step: 4,
      // 45 bytes of a sealed ACCESS, zero-padded to the 86 bytes step 2 asks of an ACCESS_SIGNED.
      command: Buffer.concat([
        Buffer.from([1, FrameKind.ACCESS_SIGNED]),
        sealedOk.subarray(2),
        Buffer.alloc(86 - sealedOk.length),
      ]),
    },
    {
      name: 'ACCESS on a box that holds no K_park',
      step: 4,
      command: sealedOk,
      config: { parkingKey: null, parkingKeyNext: null },
    },
    {
      name: 'ACCESS on a box that holds only parking_key_next',
      step: 11,
      reading: 'K_park absent but parking_key_next present: the next key is still tried',
      command: sealCommand({
        key: VECTOR_KEYS.parkingKeyNext,
        kind: FrameKind.ACCESS,
        keyId: 43,
        scope: PARKING_ID,
        nonce: nonce(2),
        body: access1,
      }),
      config: { parkingKey: null },
    },
    {
      name: 'ACCESS_SIGNED of a revoked key: REVOKED, no try spent',
      step: '8a',
      reading: 'REVOKED answers remaining as the unchanged tries left (step 5 passed), like WRONG_MODULE',
      command: ok,
      state: revoked(T0 + 2 * HOUR),
    },
    { name: 'sealed ACCESS of a revoked key: REVOKED', step: '8a', command: sealedOk, state: revoked(T0 + 2 * HOUR) },
    {
      name: 'revocation whose until + skew equals box_time still refuses',
      step: '8a',
      command: ok,
      state: revoked(now - skew),
    },
    {
      name: 'revocation whose until + skew is before box_time no longer refuses',
      step: 11,
      command: ok,
      state: revoked(now - skew - 1),
    },
    {
      name: 'revoked key outside its window: EXPIRED comes first',
      step: 7,
      command: ok,
      state: revoked(T0 + 48 * HOUR),
      conditions: { boxTime: T0 + 2 * HOUR + 121 },
    },
    {
      name: 'revoked key whose module list lacks this box: WRONG_MODULE comes first',
      step: 8,
      command: signed({ ...access1, moduleIds: [102] }),
      state: revoked(T0 + 2 * HOUR),
    },
    {
      name: 'revoked key with no tries left: REVOKED comes first',
      step: '8a',
      command: ok,
      state: { ...revoked(T0 + 2 * HOUR), tries: new Map([[42, { count: 1, notAfter: T0 + 2 * HOUR }]]) },
    },
    {
      name: 'tries are counted per key_id whichever access kind carried it',
      step: 9,
      command: ok,
      state: { tries: new Map([[42, { count: 1, notAfter: T0 + 2 * HOUR }]]) },
    },
    {
      name: 'ACCESS_SIGNED with a battery below the minimum (the try counts)',
      step: 10,
      command: ok,
      conditions: { batteryMv: 3299 },
    },
    {
      name: 'REVOKE accepted (battery and barrier do not refuse it)',
      step: 6,
      command: control(
        FrameKind.REVOKE,
        6,
        revokeBody([
          { keyId: 42, until: T0 + 2 * HOUR },
          { keyId: 43, until: T0 + HOUR },
        ]),
      ),
      conditions: { batteryMv: 3000, jammed: true },
    },
    {
      name: 'REVOKE with the last accepted sequence',
      step: 6,
      command: control(FrameKind.REVOKE, 5, revokeBody([{ keyId: 42, until: T0 + 2 * HOUR }])),
    },
    {
      name: 'REVOKE for another module',
      step: 3,
      command: sealRawCommand({
        key: boxKey,
        kind: FrameKind.REVOKE,
        keyId: 6,
        scope: 102,
        nonce: nonce(6),
        plaintext: revokeBody([{ keyId: 42, until: T0 }]),
      }),
    },
    {
      name: 'REVOKE under the parking key',
      step: 4,
      command: control(FrameKind.REVOKE, 6, revokeBody([{ keyId: 42, until: T0 }]), parkingKey),
    },
    {
      name: 'BATTERY_QUERY with key_id 0xffffffff and a made-up tag: AUTH_FAILED echoes the key_id, which proves nothing',
      step: 4,
      reading:
        'the echo of a frame refused at step 4 is not authenticated (echo_authenticated false): a service learns no control sequence from it',
      command: Buffer.concat([
        control(FrameKind.BATTERY_QUERY, 0xffff_ffff, Buffer.alloc(0)).subarray(0, 22),
        Buffer.from('0123456789abcdef', 'hex'),
      ]),
    },
    {
      name: 'REVOKE whose header names sequence 7 over the body and tag sealed for 6: AUTH_FAILED echoes 7',
      step: 4,
      reading: 'a refused REVOKE echoing the sequence of a pending one settles nothing (echo_authenticated false)',
      command: (() => {
        const frame = control(FrameKind.REVOKE, 6, revokeBody([{ keyId: 42, until: T0 }]));
        frame.writeUInt32BE(7, 2);
        return frame;
      })(),
    },
    { name: 'REVOKE with count 0', step: 5, command: control(FrameKind.REVOKE, 6, Buffer.from([0])) },
    {
      name: 'REVOKE with count 17',
      step: 5,
      command: control(
        FrameKind.REVOKE,
        6,
        revokeBody(Array.from({ length: 17 }, (_, i) => ({ keyId: i, until: T0 }))),
      ),
    },
    {
      name: 'REVOKE whose count says 2 but holds 1 entry',
      step: 5,
      command: control(
        FrameKind.REVOKE,
        6,
        Buffer.concat([Buffer.from([2]), revokeBody([{ keyId: 42, until: T0 }]).subarray(1)]),
      ),
    },
    {
      name: 'REVOKE into a full list: REVOCATION_FULL, the list as it was, the sequence accepted',
      step: 6,
      command: control(FrameKind.REVOKE, 6, revokeBody([{ keyId: 42, until: T0 + 2 * HOUR }])),
      state: full(),
    },
    {
      name: 'REVOKE into a full list with an expired entry: forgotten first, then OK',
      step: 6,
      command: control(FrameKind.REVOKE, 6, revokeBody([{ keyId: 42, until: T0 + 2 * HOUR }])),
      state: full([[7, now - skew - 1]]),
    },
    {
      name: 'REVOCATION_FULL also keeps the expired entries it would have forgotten',
      step: 6,
      reading: 'REVOCATION_FULL: "nothing changed" covers the forgetting too; only the sequence moves',
      command: control(
        FrameKind.REVOKE,
        6,
        revokeBody([
          { keyId: 42, until: T0 + 2 * HOUR },
          { keyId: 43, until: T0 + 2 * HOUR },
        ]),
      ),
      state: full([[7, now - skew - 1]]),
    },
    {
      name: 'REVOKE of an id already listed needs no room and keeps the later until',
      step: 6,
      command: control(
        FrameKind.REVOKE,
        6,
        revokeBody([
          { keyId: 42, until: T0 + 2 * HOUR },
          { keyId: 2000, until: T0 },
        ]),
      ),
      state: full([[42, T0 + HOUR]]),
    },
    {
      name: 'REVOKE listing one id twice keeps the later until',
      step: 6,
      reading: 'an id twice in one REVOKE is one entry with the later until',
      command: control(
        FrameKind.REVOKE,
        6,
        revokeBody([
          { keyId: 42, until: T0 + 2 * HOUR },
          { keyId: 42, until: T0 + HOUR },
        ]),
      ),
    },
    {
      name: 'REVOKE entry already expired is added as given',
      step: 6,
      reading:
        'REVOKE adds every entry as given, even one whose until + skew is already before box_time (the next REVOKE forgets it)',
      command: control(FrameKind.REVOKE, 6, revokeBody([{ keyId: 42, until: T0 - 10 * HOUR }])),
    },
    {
      name: 'SET_ISSUER (new, previous) accepted',
      step: 6,
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([issuerPublic(1), issuerPublic(0)])),
    },
    {
      name: 'SET_ISSUER (new, none) accepted',
      step: 6,
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([issuerPublic(1), zeros])),
      state: { issuerKey: issuerPublic(1), issuerKeyPrevious: issuerPublic(0) },
    },
    {
      name: 'SET_ISSUER with issuer_key equal to issuer_key_previous accepted',
      step: 6,
      reading: 'nothing forbids both keys being the same point',
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([issuerPublic(1), issuerPublic(1)])),
    },
    {
      name: 'SET_ISSUER with the last accepted sequence',
      step: 6,
      command: control(FrameKind.SET_ISSUER, 5, Buffer.concat([issuerPublic(1), zeros])),
    },
    {
      name: 'SET_ISSUER with a point not on the curve',
      step: 5,
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([flip(issuerPublic(1), 63), zeros])),
    },
    {
      name: 'SET_ISSUER with a previous key not on the curve',
      step: 5,
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([issuerPublic(1), flip(issuerPublic(0), 63)])),
    },
    {
      name: 'SET_ISSUER with issuer_key all zero (only the previous key may be none)',
      step: 5,
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([zeros, issuerPublic(0)])),
    },
    {
      name: 'SET_ISSUER with a coordinate at or above p',
      step: 5,
      reading:
        'a point on P-256 has both coordinates below p; X || Y whose x is p + x0 is MALFORMED even though it satisfies the equation modulo p',
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([pointWithCoordinateAboveP(), zeros])),
    },
    {
      name: 'SET_ISSUER with a 127-byte body',
      step: 5,
      command: control(FrameKind.SET_ISSUER, 6, Buffer.concat([issuerPublic(1), zeros]).subarray(0, 127)),
    },
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
      ...(c.reading === undefined ? {} : { reading: c.reading }),
      config: {
        module_id: config.moduleId,
        parking_id: config.parkingId,
        direction: config.direction,
        parking_key: config.parkingKey === null ? null : hex(config.parkingKey),
        parking_key_next: config.parkingKeyNext === null ? null : hex(config.parkingKeyNext),
        box_key: hex(config.boxKey),
        skew_seconds: config.skewSeconds ?? 120,
        min_battery_mv: config.minBatteryMv,
        revocation_capacity: config.revocationCapacity ?? 64,
      },
      state: boxStateToJson(state),
      conditions: {
        box_time: conditions.boxTime,
        battery_mv: conditions.batteryMv,
        barrier: conditions.barrier,
        jammed: conditions.jammed,
      },
      command: hex(c.command),
      expected: {
        status: decision.status,
        status_name: statusName(decision.status) ?? '?',
        response: hex(decision.response),
        state: boxStateToJson(decision.state),
        echo_authenticated: echoIsAuthenticated(decision),
      },
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
  const signedCommands = signedCommandVectors(bytes);
  const responses = responseVectors();
  return {
    version: 2,
    crc16: crcVectors(),
    commands,
    issuers: issuerVectors(),
    signed_commands: signedCommands,
    responses,
    link_frames: linkFrameVectors(bytes, responses),
    ble_chunks: bleChunkVectors(bytes, responses),
    decisions: decisionVectors(),
  };
}

/** The file's text: two-space JSON and a final newline. */
export function testVectorsJson(): string {
  return `${JSON.stringify(generateTestVectors(), null, 2)}\n`;
}
