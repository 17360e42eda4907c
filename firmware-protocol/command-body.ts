// Command bodies, the plaintext before sealing or signing (docs/protocol.md,
// Command frame, bodies). Encoders validate and throw ProtocolError(BAD_INPUT); the decoder
// returns null for a body whose length its kind does not allow (docs/protocol.md, step 5).
import {
  ACCESS_FIXED_BODY_LENGTH,
  AccessBodyOffset,
  FrameKind,
  ISSUER_PUBLIC_KEY_LENGTH,
  MAX_MODULES,
  MAX_REVOKE_ENTRIES,
  REVOKE_ENTRY_LENGTH,
  SET_ISSUER_BODY_LENGTH,
  TIME_SET_BODY_LENGTH,
} from './constants.js';
import { requireU32, requireU8 } from './bytes.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';
import { isP256Point } from './p256.js';

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

/** One REVOKE entry: key_id is refused until `until` (Unix seconds) + skew. */
export interface RevokeEntry {
  readonly keyId: number;
  readonly until: number;
}

/** REVOKE body (docs/protocol.md, Command frame, bodies): 1..16 entries. */
export interface RevokeBody {
  readonly entries: readonly RevokeEntry[];
}

/** SET_ISSUER body (docs/protocol.md, Command frame, bodies): two public keys X || Y (64 bytes
 * each); issuerKeyPrevious null travels as 64 zero bytes ("none"). */
export interface SetIssuerBody {
  readonly issuerKey: Uint8Array;
  readonly issuerKeyPrevious: Uint8Array | null;
}

export interface BodyOfKind {
  [FrameKind.ACCESS]: AccessBody;
  [FrameKind.BATTERY_QUERY]: BatteryQueryBody;
  [FrameKind.TIME_SET]: TimeSetBody;
  /** docs/protocol.md, Command frame, bodies: "ACCESS_SIGNED: the ACCESS body, in the clear". */
  [FrameKind.ACCESS_SIGNED]: AccessBody;
  [FrameKind.REVOKE]: RevokeBody;
  [FrameKind.SET_ISSUER]: SetIssuerBody;
}

const EMPTY_BODY = Buffer.alloc(0);

export function encodeAccessBody(body: AccessBody): Buffer {
  const ids: unknown = body.moduleIds;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > MAX_MODULES) {
    throw new ProtocolError(
      ProtocolErrorCode.BAD_INPUT,
      `moduleIds must hold 1..${MAX_MODULES} module ids, got ${Array.isArray(ids) ? ids.length : typeof ids}`,
    );
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

export function encodeRevokeBody(body: RevokeBody): Buffer {
  const entries: unknown = body.entries;
  if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_REVOKE_ENTRIES) {
    throw new ProtocolError(
      ProtocolErrorCode.BAD_INPUT,
      `entries must hold 1..${MAX_REVOKE_ENTRIES} entries, got ${Array.isArray(entries) ? entries.length : typeof entries}`,
    );
  }
  const out = Buffer.allocUnsafe(1 + REVOKE_ENTRY_LENGTH * entries.length);
  out[0] = entries.length;
  body.entries.forEach((entry, i) => {
    out.writeUInt32BE(requireU32('entries[].keyId', entry.keyId), 1 + REVOKE_ENTRY_LENGTH * i);
    out.writeUInt32BE(requireU32('entries[].until', entry.until), 5 + REVOKE_ENTRY_LENGTH * i);
  });
  return out;
}

function requirePoint(field: string, key: unknown): Uint8Array {
  if (!(key instanceof Uint8Array) || !isP256Point(key)) {
    throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `${field} must be 64 bytes X || Y of a point on P-256`);
  }
  return key;
}

export function encodeSetIssuerBody(body: SetIssuerBody): Buffer {
  const out = Buffer.alloc(SET_ISSUER_BODY_LENGTH); // zeros: "none" for a null previous key
  out.set(requirePoint('issuerKey', body.issuerKey), 0);
  if (body.issuerKeyPrevious !== null)
    out.set(requirePoint('issuerKeyPrevious', body.issuerKeyPrevious), ISSUER_PUBLIC_KEY_LENGTH);
  return out;
}

export function encodeBody(kind: FrameKind, body: unknown): Buffer {
  switch (kind) {
    case FrameKind.ACCESS:
    case FrameKind.ACCESS_SIGNED:
      return encodeAccessBody(body as AccessBody);
    case FrameKind.BATTERY_QUERY:
      return EMPTY_BODY;
    case FrameKind.TIME_SET:
      return encodeTimeSetBody(body as TimeSetBody);
    case FrameKind.REVOKE:
      return encodeRevokeBody(body as RevokeBody);
    case FrameKind.SET_ISSUER:
      return encodeSetIssuerBody(body as SetIssuerBody);
  }
}

/** docs/protocol.md, step 5: module_count 1..32 and exactly 11 + 4 × count bytes. */
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

/** docs/protocol.md, step 5: REVOKE count 1..16 and exactly 1 + 8 × count bytes. */
export function decodeRevokeBody(plain: Uint8Array): RevokeBody | null {
  const count = plain[0] ?? 0;
  if (count < 1 || count > MAX_REVOKE_ENTRIES || plain.length !== 1 + REVOKE_ENTRY_LENGTH * count) return null;
  const buf = Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
  const entries: RevokeEntry[] = [];
  for (let i = 0; i < count; i++)
    entries.push({
      keyId: buf.readUInt32BE(1 + REVOKE_ENTRY_LENGTH * i),
      until: buf.readUInt32BE(5 + REVOKE_ENTRY_LENGTH * i),
    });
  return { entries };
}

const isAllZero = (bytes: Uint8Array): boolean => bytes.every((b) => b === 0);

/** docs/protocol.md, step 5: SET_ISSUER 128 bytes, each key either 64 zero
 * bytes (only issuer_key_previous may be) or a point on P-256. The keys are
 * copied: the frame's buffer may be reused by the caller. */
export function decodeSetIssuerBody(plain: Uint8Array): SetIssuerBody | null {
  if (plain.length !== SET_ISSUER_BODY_LENGTH) return null;
  const issuerKey = Buffer.from(plain.subarray(0, ISSUER_PUBLIC_KEY_LENGTH));
  const previous = Buffer.from(plain.subarray(ISSUER_PUBLIC_KEY_LENGTH));
  if (!isP256Point(issuerKey)) return null;
  if (isAllZero(previous)) return { issuerKey, issuerKeyPrevious: null };
  return isP256Point(previous) ? { issuerKey, issuerKeyPrevious: previous } : null;
}

/** docs/protocol.md, step 5: the body has the length its kind requires. */
export function decodeBody<K extends FrameKind>(kind: K, plain: Uint8Array): BodyOfKind[K] | null;
export function decodeBody(kind: FrameKind, plain: Uint8Array): BodyOfKind[FrameKind] | null {
  switch (kind) {
    case FrameKind.ACCESS:
    case FrameKind.ACCESS_SIGNED:
      return decodeAccessBody(plain);
    case FrameKind.BATTERY_QUERY:
      return plain.length === 0 ? {} : null;
    case FrameKind.TIME_SET:
      return plain.length === TIME_SET_BODY_LENGTH
        ? { time: Buffer.from(plain.buffer, plain.byteOffset, 4).readUInt32BE(0) }
        : null;
    case FrameKind.REVOKE:
      return decodeRevokeBody(plain);
    case FrameKind.SET_ISSUER:
      return decodeSetIssuerBody(plain);
  }
}
