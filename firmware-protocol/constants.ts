// Numbers of the box protocol, version 2: frame kinds, status codes, barrier
// states, directions, link frame types, and the byte offsets of each frame.
// Everything here is copied from docs/protocol.md; cite it when you change a value.

/** docs/protocol.md, Command frame and Response frame: offset 0. */
export const PROTOCOL_VERSION = 0x01;

/** docs/protocol.md, Command frame: kind (offset 1). */
export const FrameKind = {
  ACCESS: 0x01,
  BATTERY_QUERY: 0x02,
  TIME_SET: 0x03,
  /** Version 2: an ACCESS body in the clear, signed by the parking's issuer key. */
  ACCESS_SIGNED: 0x04,
  /** Version 2: puts smart key ids on the box's revocation list (a control kind). */
  REVOKE: 0x05,
  /** Version 2: replaces the box's two issuer public keys (a control kind). */
  SET_ISSUER: 0x06,
} as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];
export type FrameKindName = keyof typeof FrameKind;

/** docs/protocol.md, Response frame: status codes. */
export const Status = {
  OK: 0x00,
  NOT_YET_VALID: 0x10,
  EXPIRED: 0x11,
  NO_TRIES_LEFT: 0x12,
  WRONG_MODULE: 0x13,
  WRONG_PARKING: 0x14,
  REPLAY: 0x15,
  REVOKED: 0x16,
  AUTH_FAILED: 0x20,
  MALFORMED: 0x21,
  UNSUPPORTED_VERSION: 0x22,
  BARRIER_FAULT: 0x30,
  LOW_BATTERY: 0x31,
  REVOCATION_FULL: 0x32,
} as const;
export type Status = (typeof Status)[keyof typeof Status];
export type StatusName = keyof typeof Status;

/** docs/protocol.md, Response frame: barrier (offset 21). */
export const Barrier = {
  CLOSED: 0,
  OPENING: 1,
  OPEN: 2,
  CLOSING: 3,
  FAULT: 4,
} as const;
export type Barrier = (typeof Barrier)[keyof typeof Barrier];
export type BarrierName = keyof typeof Barrier;

/** docs/protocol.md, Response frame: direction (offset 22). */
export const Direction = {
  CONTROL: 0,
  ENTRANCE: 1,
  EXIT: 2,
} as const;
export type Direction = (typeof Direction)[keyof typeof Direction];

/** docs/protocol.md, Serial link framing: types. */
export const LinkType = {
  COMMAND: 0x01,
  STATUS_REQUEST: 0x02,
  RESPONSE: 0x81,
  STATUS_REPORT: 0x82,
} as const;
export type LinkType = (typeof LinkType)[keyof typeof LinkType];
export type LinkTypeName = keyof typeof LinkType;

/** docs/protocol.md, Response frame: `remaining` when not applicable. */
export const REMAINING_NOT_APPLICABLE = 0xff;

/** docs/protocol.md, step 7: default skew in seconds. */
export const DEFAULT_SKEW_SECONDS = 120;

/** docs/protocol.md, Command frame: offsets and sizes. */
export const CommandOffset = {
  version: 0,
  kind: 1,
  keyId: 2,
  scope: 6,
  nonce: 10,
  body: 22,
} as const;
export const NONCE_LENGTH = 12;
export const TAG_LENGTH = 8;
/** Header (22 bytes, nonce included) plus the tag: the smallest whole frame. */
export const COMMAND_HEADER_LENGTH = 22;
export const MIN_COMMAND_LENGTH = COMMAND_HEADER_LENGTH + TAG_LENGTH; // 30, docs/protocol.md, step 2
export const KEY_LENGTH = 16;
/** docs/protocol.md, Command frame, ACCESS_SIGNED: ECDSA P-256 r || s, 32 bytes each. */
export const SIGNATURE_LENGTH = 64;
/** Header and signature: the smallest ACCESS_SIGNED (docs/protocol.md, step 2: 86 bytes). */
export const MIN_SIGNED_COMMAND_LENGTH = COMMAND_HEADER_LENGTH + SIGNATURE_LENGTH;
/** docs/protocol.md, Keys: an issuer public key on the wire and in files, X || Y. */
export const ISSUER_PUBLIC_KEY_LENGTH = 64;
/** An issuer private key as raw bytes: the P-256 scalar d, big-endian. */
export const ISSUER_PRIVATE_KEY_LENGTH = 32;

/** docs/protocol.md, Command frame: ACCESS body. */
export const AccessBodyOffset = {
  notBefore: 0,
  notAfter: 4,
  maxEntries: 8,
  maxExits: 9,
  moduleCount: 10,
  moduleIds: 11,
} as const;
export const ACCESS_FIXED_BODY_LENGTH = 11;
export const MAX_MODULES = 32;
export const TIME_SET_BODY_LENGTH = 4;
/** docs/protocol.md, Command frame, REVOKE body: count u8 (1..16) || (key_id u32 || until u32) × count. */
export const MAX_REVOKE_ENTRIES = 16;
export const REVOKE_ENTRY_LENGTH = 8;
/** docs/protocol.md, Command frame, SET_ISSUER body: issuer_key (64) || issuer_key_previous (64). */
export const SET_ISSUER_BODY_LENGTH = 2 * ISSUER_PUBLIC_KEY_LENGTH;
/** docs/protocol.md, after step 11: the list holds at least 64 entries (the simulator: exactly 64). */
export const REVOCATION_LIST_CAPACITY = 64;
/** docs/protocol.md, Sizes: a sealed ACCESS is at most 22 + 11 + 4 × 32 + 8 = 169 bytes. */
export const MAX_SEALED_COMMAND_LENGTH =
  COMMAND_HEADER_LENGTH + ACCESS_FIXED_BODY_LENGTH + 4 * MAX_MODULES + TAG_LENGTH;
/** docs/protocol.md, Sizes: 22 + 11 + 4 × 32 + 64 = 225 (ACCESS_SIGNED with 32 modules). */
export const MAX_COMMAND_LENGTH = COMMAND_HEADER_LENGTH + ACCESS_FIXED_BODY_LENGTH + 4 * MAX_MODULES + SIGNATURE_LENGTH;

/** docs/protocol.md, Response frame: offsets. */
export const ResponseOffset = {
  version: 0,
  status: 1,
  kind: 2,
  moduleId: 3,
  keyId: 7,
  boxSeq: 11,
  boxTime: 15,
  batteryMv: 19,
  barrier: 21,
  direction: 22,
  remaining: 23,
  tag: 24,
} as const;
export const RESPONSE_LENGTH = 32;
/** Bytes 0..23 of a response are authenticated (docs/protocol.md, Response frame, offset 24). */
export const RESPONSE_SIGNED_LENGTH = 24;

/** docs/protocol.md, Sizes: a link frame, COBS, CRC and the 0x00 delimiter included
 * (1 + 225 + 2 = 228 raw bytes, one COBS overhead byte, the delimiter). */
export const MAX_LINK_FRAME_LENGTH = 230;
/** The longest run of encoded bytes accepted between two delimiters. */
export const MAX_LINK_ENCODED_LENGTH = MAX_LINK_FRAME_LENGTH - 1;

/** The largest values of the frames' unsigned fields (u8, u16, u32, big-endian):
 * the one definition every part checks its numbers against. */
export const U8_MAX = 0xff;
export const U16_MAX = 0xffff;
export const U32_MAX = 0xffff_ffff;

function reverse<T extends Record<string, number>>(table: T): ReadonlyMap<number, keyof T & string> {
  return new Map(Object.entries(table).map(([name, code]) => [code, name as keyof T & string]));
}

const kindNames = reverse(FrameKind);
const statusNames = reverse(Status);
const barrierNames = reverse(Barrier);
const linkTypeNames = reverse(LinkType);

/** `ACCESS` for 0x01; undefined for a byte that is no kind. */
export function kindName(code: number): FrameKindName | undefined {
  return kindNames.get(code);
}
export function statusName(code: number): StatusName | undefined {
  return statusNames.get(code);
}
export function barrierName(code: number): BarrierName | undefined {
  return barrierNames.get(code);
}
export function linkTypeName(code: number): LinkTypeName | undefined {
  return linkTypeNames.get(code);
}
export function isFrameKind(code: number): code is FrameKind {
  return kindNames.has(code);
}
export function isStatus(code: number): code is Status {
  return statusNames.has(code);
}
export function isBarrier(code: number): code is Barrier {
  return barrierNames.has(code);
}
export function isLinkType(code: number): code is LinkType {
  return linkTypeNames.has(code);
}
/** Control kinds are sealed under the box key and answered with direction 0
 * (docs/protocol.md, Command frame: BATTERY_QUERY, TIME_SET, REVOKE, SET_ISSUER). */
export function isControlKind(kind: number): boolean {
  return (
    kind === FrameKind.BATTERY_QUERY ||
    kind === FrameKind.TIME_SET ||
    kind === FrameKind.REVOKE ||
    kind === FrameKind.SET_ISSUER
  );
}

/** docs/protocol.md, step 7: "ACCESS and ACCESS_SIGNED (from here on, access kinds)". */
export function isAccessKind(kind: number): boolean {
  return kind === FrameKind.ACCESS || kind === FrameKind.ACCESS_SIGNED;
}

/** The smallest whole frame of a kind (docs/protocol.md, step 2): 86 for
 * ACCESS_SIGNED (header and signature), else 30 (header and tag). */
export function minFrameLength(kind: number): number {
  return kind === FrameKind.ACCESS_SIGNED ? MIN_SIGNED_COMMAND_LENGTH : MIN_COMMAND_LENGTH;
}
