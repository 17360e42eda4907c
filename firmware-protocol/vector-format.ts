// The layout of test-vectors.json (PROTOCOL.md, test vectors): snake_case
// names, hex strings for bytes. Converters between it and the typed API.
import type { AccessBody, TimeSetBody } from './command-body.js';
import type { ResponseFields } from './response.js';
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
export type CommandBodyJson = AccessBodyJson | { time: number } | Record<string, never>;

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

/** Not required by PROTOCOL.md: a box's configuration, state and conditions,
 * a command, and what the box must answer, so the order of checks can be
 * checked from outside. */
export interface DecisionVector {
  name: string;
  /** The PROTOCOL.md check (1..11) that decides. */
  step: number;
  config: {
    module_id: number;
    parking_id: number;
    direction: 'entrance' | 'exit';
    parking_key: string;
    parking_key_next: string | null;
    box_key: string;
    skew_seconds: number;
    min_battery_mv: number;
  };
  state: { box_seq: number; last_control_seq: number; tries: { key_id: number; count: number; not_after: number }[] };
  conditions: { box_time: number; battery_mv: number; barrier: number; jammed: boolean };
  command: string;
  expected: { status: number; status_name: string; response: string };
}

export interface TestVectors {
  version: 1;
  crc16: CrcVector[];
  commands: CommandVector[];
  responses: ResponseVector[];
  link_frames: LinkFrameVector[];
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
