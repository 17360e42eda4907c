// Command bodies, the plaintext before sealing (PROTOCOL.md, command frame,
// bodies). Encoders validate and throw ProtocolError(BAD_INPUT); the decoder
// returns null for a body whose length its kind does not allow (checks, step 5).
import {
  ACCESS_FIXED_BODY_LENGTH,
  AccessBodyOffset,
  FrameKind,
  MAX_MODULES,
  TIME_SET_BODY_LENGTH,
} from './constants.js';
import { requireU32, requireU8 } from './bytes.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';

/** ACCESS body: a smart key's credential. */
export interface AccessBody {
  /** Unix seconds. */
  readonly notBefore: number;
  /** Unix seconds. */
  readonly notAfter: number;
  readonly maxEntries: number;
  readonly maxExits: number;
  /** 1..32 module ids. */
  readonly moduleIds: readonly number[];
}

/** BATTERY_QUERY body: empty. */
export type BatteryQueryBody = Readonly<Record<string, never>>;

/** TIME_SET body: the time the box sets its clock to (Unix seconds). */
export interface TimeSetBody {
  readonly time: number;
}

export interface BodyOfKind {
  [FrameKind.ACCESS]: AccessBody;
  [FrameKind.BATTERY_QUERY]: BatteryQueryBody;
  [FrameKind.TIME_SET]: TimeSetBody;
}

const EMPTY_BODY = Buffer.alloc(0);

export function encodeAccessBody(body: AccessBody): Buffer {
  const ids: unknown = body.moduleIds;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > MAX_MODULES) {
    throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `moduleIds must hold 1..${MAX_MODULES} module ids, got ${Array.isArray(ids) ? ids.length : typeof ids}`);
  }
  const out = Buffer.allocUnsafe(ACCESS_FIXED_BODY_LENGTH + 4 * ids.length);
  out.writeUInt32BE(requireU32('notBefore', body.notBefore), AccessBodyOffset.notBefore);
  out.writeUInt32BE(requireU32('notAfter', body.notAfter), AccessBodyOffset.notAfter);
  out[AccessBodyOffset.maxEntries] = requireU8('maxEntries', body.maxEntries);
  out[AccessBodyOffset.maxExits] = requireU8('maxExits', body.maxExits);
  out[AccessBodyOffset.moduleCount] = ids.length;
  let offset: number = AccessBodyOffset.moduleIds;
  for (const id of body.moduleIds) {
    out.writeUInt32BE(requireU32('moduleIds[]', id), offset);
    offset += 4;
  }
  return out;
}

export function encodeTimeSetBody(body: TimeSetBody): Buffer {
  const out = Buffer.allocUnsafe(TIME_SET_BODY_LENGTH);
  out.writeUInt32BE(requireU32('time', body.time), 0);
  return out;
}

export function encodeBody(kind: FrameKind, body: unknown): Buffer {
  switch (kind) {
    case FrameKind.ACCESS:
      return encodeAccessBody(body as AccessBody);
    case FrameKind.BATTERY_QUERY:
      return EMPTY_BODY;
    case FrameKind.TIME_SET:
      return encodeTimeSetBody(body as TimeSetBody);
  }
}

/** PROTOCOL.md, checks, step 5: module_count 1..32 and exactly 11 + 4 × count bytes. */
export function decodeAccessBody(plain: Uint8Array): AccessBody | null {
  if (plain.length < ACCESS_FIXED_BODY_LENGTH) return null;
  const buf = Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
  const count = buf[AccessBodyOffset.moduleCount] ?? 0;
  if (count < 1 || count > MAX_MODULES) return null;
  if (plain.length !== ACCESS_FIXED_BODY_LENGTH + 4 * count) return null;
  const moduleIds = new Array<number>(count);
  for (let i = 0; i < count; i++) moduleIds[i] = buf.readUInt32BE(AccessBodyOffset.moduleIds + 4 * i);
  return {
    notBefore: buf.readUInt32BE(AccessBodyOffset.notBefore),
    notAfter: buf.readUInt32BE(AccessBodyOffset.notAfter),
    maxEntries: buf[AccessBodyOffset.maxEntries] ?? 0,
    maxExits: buf[AccessBodyOffset.maxExits] ?? 0,
    moduleIds,
  };
}

/** PROTOCOL.md, checks, step 5: BATTERY_QUERY 0 bytes, TIME_SET 4. */
export function decodeBody<K extends FrameKind>(kind: K, plain: Uint8Array): BodyOfKind[K] | null;
export function decodeBody(kind: FrameKind, plain: Uint8Array): BodyOfKind[FrameKind] | null {
  switch (kind) {
    case FrameKind.ACCESS:
      return decodeAccessBody(plain);
    case FrameKind.BATTERY_QUERY:
      return plain.length === 0 ? {} : null;
    case FrameKind.TIME_SET:
      return plain.length === TIME_SET_BODY_LENGTH ? { time: Buffer.from(plain.buffer, plain.byteOffset, 4).readUInt32BE(0) } : null;
  }
}
