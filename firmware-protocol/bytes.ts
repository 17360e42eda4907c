// Small helpers for fixed-width big-endian fields (docs/protocol.md, introduction: "All integers
// are unsigned and big-endian"). Encoders validate their inputs here so a bad
// value is a typed error, never a silently truncated byte.
import { U16_MAX, U32_MAX, U8_MAX } from './constants.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';

export function isU8(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= U8_MAX;
}
export function isU16(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= U16_MAX;
}
export function isU32(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= U32_MAX;
}

function check(ok: boolean, field: string, value: unknown, what: string): void {
  if (!ok) throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `${field} must be ${what}, got ${String(value)}`);
}
export function requireU8(field: string, value: number): number {
  check(isU8(value), field, value, 'an integer 0..255');
  return value;
}
export function requireU16(field: string, value: number): number {
  check(isU16(value), field, value, 'an integer 0..65535');
  return value;
}
export function requireU32(field: string, value: number): number {
  check(isU32(value), field, value, 'an integer 0..4294967295');
  return value;
}
export function requireLength(field: string, bytes: Uint8Array, length: number): Uint8Array {
  check(
    bytes instanceof Uint8Array && bytes.length === length,
    field,
    bytes instanceof Uint8Array ? `${bytes.length} bytes` : typeof bytes,
    `${length} bytes`,
  );
  return bytes;
}

/** A Buffer over the same memory (no copy) for any Uint8Array. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
