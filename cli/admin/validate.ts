// Parsing and checking of admin flags. Each failure is a UsageError: one
// line naming the flag, exit code 2.
import { isAccessMode } from '../../api/parkings/access-modes.js';
import { parseMinorUnits } from '../../api/parkings/money.js';
import type { AccessMode } from '../../api/parkings/repository.js';
// constants.ts alone: the admin commands' help loads this file, and the rest of the protocol is not needed.
import { U32_MAX } from '../../firmware-protocol/constants.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import { isMacAddress } from '../../lib/wire-patterns.js';
import { isPrintableText } from '../../api/http/schemas.js';
import { parseIsoTime } from '../../api/http/time.js';
import { UsageError } from '../errors.js';

function integerIn(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

export const parseId = (flag: string, raw: string): number => integerIn(flag, raw, 1, Number.MAX_SAFE_INTEGER);
export const parseModuleId = (raw: string): number => integerIn('--module-id', raw, 0, U32_MAX);
export const parseTries = (raw: string): number => integerIn('--tries', raw, 1, 255);
/** Up to 30 days: a session window longer than that is surely a typo. */
export const parseMaxDuration = (raw: string): number => integerIn('--max-duration-minutes', raw, 1, 43_200);

/** Names and phone numbers: the API's "printable text" rule (api/schemas.ts). */
export function parseName(flag: string, raw: string, max = 100): string {
  const value = raw.trim();
  if (value === '' || value.length > max || !isPrintableText(value))
    throw new UsageError(`${flag} must be 1 to ${max} characters of printable text`);
  return value;
}

/** ISO 4217: three letters, and one node's Intl knows. */
export function parseCurrency(raw: string): string {
  const value = raw.trim().toUpperCase();
  const known = Intl.supportedValuesOf('currency');
  if (!/^[A-Z]{3}$/.test(value) || !known.includes(value))
    throw new UsageError(`--currency must be an ISO 4217 code such as EUR, got "${raw}"`);
  return value;
}

export function parsePrice(raw: string): number {
  const minor = parseMinorUnits(raw);
  if (minor === undefined)
    throw new UsageError(`--price-per-hour must be a decimal with at most 2 decimals, such as 2.50, got "${raw}"`);
  return minor;
}

export function parseMac(raw: string): string {
  const value = raw.trim().toUpperCase().replaceAll('-', ':');
  if (!isMacAddress(value)) throw new UsageError(`--mac must look like AA:BB:CC:DD:EE:FF, got "${raw}"`);
  return value;
}

export function parseDirection(raw: string): BoxDirection {
  if (raw === 'entrance' || raw === 'exit') return raw;
  throw new UsageError(`--direction must be entrance or exit, got "${raw}"`);
}

export function parseAccessMode(raw: string): AccessMode {
  if (isAccessMode(raw)) return raw;
  throw new UsageError(`--access must be signed or sealed, got "${raw}"`);
}

export function parseBoolean(flag: string, raw: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new UsageError(`${flag} must be true or false, got "${raw}"`);
}

export function parseHttpUrl(flag: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${flag} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${flag} must be an http(s) URL, got "${raw}"`);
  return url.toString();
}

/** An ISO 8601 time with its offset (Z or ±hh:mm), or a date alone, read
 * as midnight UTC: the API's own reading (api/sessions/time.ts). */
export function parseIsoTimeFlag(flag: string, raw: string): number {
  const ms = parseIsoTime(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (ms === undefined)
    throw new UsageError(`${flag} must be an ISO 8601 time with its offset, e.g. 2026-01-31T08:00:00Z, got "${raw}"`);
  return ms;
}
