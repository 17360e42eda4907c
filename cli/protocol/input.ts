// Parsing and validation of what a user types for `parkbench protocol`:
// frame bytes (hex or base64) and flag values. Flag errors are UsageErrors
// (exit 2); bytes that are neither hex nor base64 are CliErrors (exit 1),
// like bytes that are no frame.
import { type KeyObject, createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { U32_MAX, isIssuerPublicKey, issuerPrivateKeyObject } from '../../firmware-protocol/index.js';
import { isBase64 } from '../../lib/wire-patterns.js';
import { CliError, UsageError } from '../errors.js';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** Hex when the text is an even number of hex digits (an optional `0x`
 * prefix, spaces and colons ignored), else standard padded base64. */
export function parseFrameText(text: string, what = 'frame'): Buffer {
  const compact = text.trim().replace(/^0x/i, '').replace(/[\s:]/g, '');
  if (compact.length === 0) throw new CliError(`${what}: no bytes given`);
  if (HEX.test(compact)) return Buffer.from(compact, 'hex');
  const base64 = text.trim();
  if (isBase64(base64)) return Buffer.from(base64, 'base64');
  throw new CliError(`${what}: neither hex nor base64 (standard alphabet, padded)`);
}

export function parseKeyFlag(flag: string, value: string): Buffer {
  const compact = value.trim();
  if (!/^[0-9a-fA-F]{32}$/.test(compact)) throw new UsageError(`${flag} must be 32 hex digits (16 bytes)`);
  return Buffer.from(compact, 'hex');
}

export function parseHexFlag(flag: string, value: string, bytes: number): Buffer {
  const compact = value.trim();
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(compact))
    throw new UsageError(`${flag} must be ${bytes * 2} hex digits (${bytes} bytes)`);
  return Buffer.from(compact, 'hex');
}

export function parseIntegerFlag(flag: string, value: string, max: number, min = 0): number {
  const compact = value.trim();
  const parsed = /^\d+$/.test(compact) ? Number(compact) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max)
    throw new UsageError(`${flag} must be an integer ${min}..${max}, got ${JSON.stringify(value)}`);
  return parsed;
}

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
    throw new UsageError(
      `${flag} must be an ISO 8601 date-time with a zone, e.g. 2026-01-01T00:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  const millis = Date.parse(trimmed);
  if (Number.isNaN(millis)) throw new UsageError(`${flag} is not a valid date-time: ${JSON.stringify(value)}`);
  const seconds = Math.floor(millis / 1000);
  if (seconds < 0 || seconds > U32_MAX)
    throw new UsageError(`${flag} must lie between 1970 and 2106 (a u32 of Unix seconds)`);
  return seconds;
}

const SCALAR_HEX = /^[0-9a-fA-F]{64}$/;
/** A PEM P-256 key, even with its parameters and comments, is well under this. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** `--issuer-key FILE`: a P-256 private key as PEM (PKCS#8 `PRIVATE KEY` or
 * SEC1 `EC PRIVATE KEY`) or 64 hex digits (the scalar d). Anything else (another
 * curve or algorithm, a public key, garbage, a file that cannot be read) is a
 * UsageError naming the flag. The key's bytes never appear in a message. */
export function parseIssuerKeyFile(flag: string, path: string): KeyObject {
  let text: string;
  try {
    // A regular file of key size: not a device or FIFO that would never end.
    const stat = statSync(path);
    if (!stat.isFile()) throw Object.assign(new Error('not a file'), { code: 'not a regular file' });
    if (stat.size > MAX_KEY_FILE_BYTES)
      throw Object.assign(new Error('too big'), { code: `${stat.size} bytes, more than a key` });
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const compact = text.trim();
  if (compact.includes('ENCRYPTED'))
    throw new UsageError(
      `${flag} ${path} is an encrypted key: give it unencrypted (e.g. openssl pkey -in ${path} -out plain.pem)`,
    );
  let key: KeyObject;
  try {
    if (SCALAR_HEX.test(compact)) return issuerPrivateKeyObject(Buffer.from(compact, 'hex'));
    // openssl ecparam -genkey writes EC PARAMETERS before the key: createPrivateKey finds the key.
    if (!compact.startsWith('-----BEGIN ')) throw new Error('not PEM');
    key = createPrivateKey({ key: compact, format: 'pem' });
  } catch {
    throw new UsageError(
      `${flag} ${path} holds no P-256 private key (PEM, PKCS#8 or SEC1 "EC PRIVATE KEY", or 64 hex digits of a scalar 1..n-1)`,
    );
  }
  try {
    return issuerPrivateKeyObject(key);
  } catch {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    throw new UsageError(
      `${flag} ${path} is a ${key.asymmetricKeyType ?? 'unknown'}${curve === undefined ? '' : ` ${curve}`} key, not a P-256 (prime256v1) private key`,
    );
  }
}

/** `--issuer-public-key HEX`, repeatable, each value one key or several
 * separated by commas: 128 hex digits each (X || Y), a point on P-256. */
export function parseIssuerPublicKeysFlag(flag: string, values: readonly string[]): Buffer[] {
  return values
    .flatMap((value) => value.split(','))
    .map((part) => {
      const compact = part.trim();
      if (!/^[0-9a-fA-F]{128}$/.test(compact)) {
        throw new UsageError(
          `${flag} must be 128 hex digits (64 bytes, X || Y without the 04 prefix), got ${compact.length} characters${/^[0-9a-fA-F]*$/.test(compact) ? '' : ' that are not all hex'}`,
        );
      }
      const key = Buffer.from(compact, 'hex');
      if (!isIssuerPublicKey(key)) throw new UsageError(`${flag} ${compact.slice(0, 16)}… is not a point on P-256`);
      return key;
    });
}
