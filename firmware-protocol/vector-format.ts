// The layout of test-vectors.json (docs/protocol.md, Test vectors, version 2): snake_case
// names, hex strings for bytes. Converters between it and the typed API.
import type { AccessBody, RevokeBody, SetIssuerBody, TimeSetBody } from './command-body.js';
import type { ResponseFields } from './response.js';
import type { BoxDirection, BoxState } from './box.js';
import { type Barrier, type Direction, type Status } from './constants.js';

export interface CrcVector {
  name: string;
  input_ascii: string;
  crc: string;
}

export interface AccessBodyJson {
  not_before: number;
  not_after: number;
  max_entries: number;
  max_exits: number;
  module_ids: number[];
}
export interface RevokeBodyJson {
  entries: { key_id: number; until: number }[];
}
export interface SetIssuerBodyJson {
  /** 128 hex digits, X || Y. */
  issuer_key: string;
  /** 128 hex digits, or null for none (64 zero bytes on the wire). */
  issuer_key_previous: string | null;
}
export type CommandBodyJson =
  AccessBodyJson | { time: number } | RevokeBodyJson | SetIssuerBodyJson | Record<string, never>;

export interface CommandVector {
  name: string;
  key: string;
  kind: number;
  key_id: number;
  scope: number;
  nonce: string;
  body: CommandBodyJson;
  bytes: string;
}

/** docs/protocol.md, Test vectors: an issuer key pair (test material only). */
export interface IssuerVector {
  name: string;
  /** 64 hex digits: the scalar d. */
  private_key: string;
  /** 128 hex digits: X || Y. */
  public_key: string;
}

/** docs/protocol.md, Test vectors: an ACCESS_SIGNED; `issuer` indexes `issuers`.
 * `bytes` hold one valid signature (RFC 6979 deterministic here, so the file
 * regenerates byte for byte; any valid signature would do). */
export interface SignedCommandVector {
  name: string;
  issuer: number;
  kind: number;
  key_id: number;
  scope: number;
  nonce: string;
  body: AccessBodyJson;
  bytes: string;
}

export interface ResponseFieldsJson {
  status: number;
  kind: number;
  module_id: number;
  key_id: number;
  box_seq: number;
  box_time: number;
  battery_mv: number;
  barrier: number;
  direction: number;
  remaining: number;
}

export interface ResponseVector {
  name: string;
  box_key: string;
  command_nonce: string;
  fields: ResponseFieldsJson;
  bytes: string;
}

export interface LinkFrameVector {
  name: string;
  type: number;
  payload: string;
  bytes: string;
}

/** docs/protocol.md, BLE link: a frame in the chunks of an ATT MTU. */
export interface BleChunksVector {
  name: string;
  mtu: number;
  frame: string;
  chunks: string[];
}

/** A box's persisted state in a decision vector, before and after. */
export interface BoxStateJson {
  box_seq: number;
  last_control_seq: number;
  tries: { key_id: number; count: number; not_after: number }[];
  /** 128 hex digits or null. */
  issuer_key: string | null;
  issuer_key_previous: string | null;
  /** The revocation list, by key_id. */
  revocations: { key_id: number; until: number }[];
}

/** Not required by docs/protocol.md (Test vectors): a box's configuration, state and conditions,
 * a command, and what the box must answer (and keep), so the order of checks
 * can be checked from outside. */
export interface DecisionVector {
  name: string;
  /** The step of docs/protocol.md's checks that decides: 1..11, or "8a". */
  step: number | string;
  /** When the case pins a reading of a point docs/protocol.md leaves open: which reading. */
  reading?: string;
  config: {
    module_id: number;
    parking_id: number;
    direction: BoxDirection;
    /** null: the box holds no K_park (a signed parking). */
    parking_key: string | null;
    parking_key_next: string | null;
    box_key: string;
    skew_seconds: number;
    min_battery_mv: number;
    revocation_capacity: number;
  };
  state: BoxStateJson;
  conditions: { box_time: number; battery_mv: number; barrier: number; jammed: boolean };
  command: string;
  expected: {
    status: number;
    status_name: string;
    response: string;
    state: BoxStateJson;
    /** docs/protocol.md, What an answer proves: whether the response's echoed
     * kind and key_id are those of a frame the box authenticated. */
    echo_authenticated: boolean;
  };
}

export interface TestVectors {
  version: 2;
  crc16: CrcVector[];
  commands: CommandVector[];
  issuers: IssuerVector[];
  signed_commands: SignedCommandVector[];
  responses: ResponseVector[];
  link_frames: LinkFrameVector[];
  ble_chunks: BleChunksVector[];
  decisions: DecisionVector[];
}

export function accessBodyToJson(body: AccessBody): AccessBodyJson {
  return {
    not_before: body.notBefore,
    not_after: body.notAfter,
    max_entries: body.maxEntries,
    max_exits: body.maxExits,
    module_ids: [...body.moduleIds],
  };
}

export function accessBodyFromJson(json: AccessBodyJson): AccessBody {
  return {
    notBefore: json.not_before,
    notAfter: json.not_after,
    maxEntries: json.max_entries,
    maxExits: json.max_exits,
    moduleIds: [...json.module_ids],
  };
}

export function timeSetBodyFromJson(json: { time: number }): TimeSetBody {
  return { time: json.time };
}

export function revokeBodyToJson(body: RevokeBody): RevokeBodyJson {
  return { entries: body.entries.map((e) => ({ key_id: e.keyId, until: e.until })) };
}

export function revokeBodyFromJson(json: RevokeBodyJson): RevokeBody {
  return { entries: json.entries.map((e) => ({ keyId: e.key_id, until: e.until })) };
}

const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

export function setIssuerBodyToJson(body: SetIssuerBody): SetIssuerBodyJson {
  return {
    issuer_key: hexOf(body.issuerKey),
    issuer_key_previous: body.issuerKeyPrevious === null ? null : hexOf(body.issuerKeyPrevious),
  };
}

export function setIssuerBodyFromJson(json: SetIssuerBodyJson): SetIssuerBody {
  return {
    issuerKey: Buffer.from(json.issuer_key, 'hex'),
    issuerKeyPrevious: json.issuer_key_previous === null ? null : Buffer.from(json.issuer_key_previous, 'hex'),
  };
}

export function boxStateToJson(state: BoxState): BoxStateJson {
  return {
    box_seq: state.boxSeq,
    last_control_seq: state.lastControlSeq,
    tries: [...state.tries]
      .sort(([a], [b]) => a - b)
      .map(([keyId, t]) => ({ key_id: keyId, count: t.count, not_after: t.notAfter })),
    issuer_key: state.issuerKey === null ? null : hexOf(state.issuerKey),
    issuer_key_previous: state.issuerKeyPrevious === null ? null : hexOf(state.issuerKeyPrevious),
    revocations: [...state.revocations].sort(([a], [b]) => a - b).map(([keyId, until]) => ({ key_id: keyId, until })),
  };
}

export function boxStateFromJson(json: BoxStateJson): BoxState {
  return {
    boxSeq: json.box_seq,
    lastControlSeq: json.last_control_seq,
    tries: new Map(json.tries.map((e) => [e.key_id, { count: e.count, notAfter: e.not_after }])),
    issuerKey: json.issuer_key === null ? null : Buffer.from(json.issuer_key, 'hex'),
    issuerKeyPrevious: json.issuer_key_previous === null ? null : Buffer.from(json.issuer_key_previous, 'hex'),
    revocations: new Map(json.revocations.map((e) => [e.key_id, e.until])),
  };
}

export function responseFieldsToJson(fields: ResponseFields): ResponseFieldsJson {
  return {
    status: fields.status,
    kind: fields.kind,
    module_id: fields.moduleId,
    key_id: fields.keyId,
    box_seq: fields.boxSeq,
    box_time: fields.boxTime,
    battery_mv: fields.batteryMv,
    barrier: fields.barrier,
    direction: fields.direction,
    remaining: fields.remaining,
  };
}

export function responseFieldsFromJson(json: ResponseFieldsJson): ResponseFields {
  return {
    status: json.status as Status,
    kind: json.kind,
    moduleId: json.module_id,
    keyId: json.key_id,
    boxSeq: json.box_seq,
    boxTime: json.box_time,
    batteryMv: json.battery_mv,
    barrier: json.barrier as Barrier,
    direction: json.direction as Direction,
    remaining: json.remaining,
  };
}
