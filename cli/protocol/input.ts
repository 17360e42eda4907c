// Parsing and validation of what a user types for `parkbench protocol`:
// frame bytes (hex or base64) and flag values. Flag errors are UsageErrors
// (exit 2); bytes that are neither hex nor base64 are CliErrors (exit 1),
// like bytes that are no frame.
import { CliError, UsageError } from '../errors.js';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Hex when the text is an even number of hex digits (an optional `0x`
 * prefix, spaces and colons ignored), else standard padded base64. */
export function parseFrameText(text: string, what = 'frame'): Buffer {
  const compact = text.trim().replace(/^0x/i, '').replace(/[\s:]/g, '');
  if (compact.length === 0) throw new CliError(`${what}: no bytes given`);
  if (HEX.test(compact)) return Buffer.from(compact, 'hex');
  const base64 = text.trim();
  if (BASE64.test(base64)) return Buffer.from(base64, 'base64');
  throw new CliError(`${what}: neither hex nor base64 (standard alphabet, padded)`);
}

export function parseKeyFlag(flag: string, value: string): Buffer {
  const compact = value.trim();
  if (!/^[0-9a-fA-F]{32}$/.test(compact)) throw new UsageError(`${flag} must be 32 hex digits (16 bytes)`);
  return Buffer.from(compact, 'hex');
}

export function parseHexFlag(flag: string, value: string, bytes: number): Buffer {
  const compact = value.trim();
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(compact)) throw new UsageError(`${flag} must be ${bytes * 2} hex digits (${bytes} bytes)`);
  return Buffer.from(compact, 'hex');
}

export function parseIntegerFlag(flag: string, value: string, max: number, min = 0): number {
  const compact = value.trim();
  const parsed = /^\d+$/.test(compact) ? Number(compact) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) throw new UsageError(`${flag} must be an integer ${min}..${max}, got ${JSON.stringify(value)}`);
  return parsed;
}

export const U32_MAX = 0xffffffff;
export const U8_MAX = 0xff;

export function parseModulesFlag(flag: string, value: string): number[] {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length < 1 || parts.length > 32 || parts.some((part) => part === '')) {
    throw new UsageError(`${flag} must list 1..32 module ids separated by commas, got ${JSON.stringify(value)}`);
  }
  return parts.map((part) => parseIntegerFlag(flag, part, U32_MAX));
}

/** An ISO 8601 date-time with a zone (Z or ±hh:mm), as Unix seconds (u32). */
export function parseTimeFlag(flag: string, value: string): number {
  const trimmed = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/.test(trimmed)) {
    throw new UsageError(`${flag} must be an ISO 8601 date-time with a zone, e.g. 2026-01-01T00:00:00Z, got ${JSON.stringify(value)}`);
  }
  const millis = Date.parse(trimmed);
  if (Number.isNaN(millis)) throw new UsageError(`${flag} is not a valid date-time: ${JSON.stringify(value)}`);
  const seconds = Math.floor(millis / 1000);
  if (seconds < 0 || seconds > U32_MAX) throw new UsageError(`${flag} must lie between 1970 and 2106 (a u32 of Unix seconds)`);
  return seconds;
}
