// JSON schemas shared by routes (and so by the OpenAPI document).
import { BASE64_PATTERN } from '../../lib/wire-patterns.js';

/** Emails: a pragmatic check (one @, a dotted domain, no spaces), as
 * registration forms do; deliverability is not the API's business. */
export const EMAIL_PATTERN =
  "^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$";
/**
 * "Printable text", the one rule of names and phone numbers: at least one
 * visible character, and none of Unicode's "other" characters (\p{C}:
 * controls such as NUL and ESC, format characters such as the
 * right-to-left override or the zero-width space, lone surrogates, private
 * use, unassigned) nor line or paragraph separators. Plain spaces are fine;
 * ZWNJ and ZWJ (U+200C, U+200D) are too, as Persian and Indic names and
 * emoji sequences need them, but they do not count as visible. Ajv compiles
 * patterns with the `u` flag, so \p{...} classes work and a lone surrogate
 * is one code point of \p{Cs}.
 */
export const PRINTABLE_TEXT_PATTERN = '^(?=.*[^\\p{C}\\p{Z}])(?:[^\\p{C}\\p{Zl}\\p{Zp}]|[\\u200C\\u200D])*$';

const PRINTABLE_TEXT = new RegExp(PRINTABLE_TEXT_PATTERN, 'u');

/** PRINTABLE_TEXT_PATTERN outside JSON schemas (the operator CLI). */
export function isPrintableText(text: string): boolean {
  return PRINTABLE_TEXT.test(text);
}

const LONE_SURROGATE = /\p{Cs}/u;

/** No lone surrogate: the text can be stored (and forwarded) as UTF-8. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;
export const EMAIL_MAX_LENGTH = 254;
export const NAME_MAX_LENGTH = 100;
export const PHONE_MAX_LENGTH = 32;

/** No lone surrogate (ajv patterns have the `u` flag): the text can be stored as UTF-8. */
export const WELL_FORMED_TEXT_PATTERN = '^\\P{Cs}*$';
/** `YYYY-MM-DD HH:MM:SS`, UTC, a real time of years 0001..9999 (formats.ts). */
export const SQL_TIME_FORMAT = 'sql-time';

/** A positive decimal integer of a query string or path (ids, limits): query
 * strings are not coerced (coerceTypes is off), so they are checked as text. */
export const DECIMAL_ID_PATTERN = '^[1-9][0-9]{0,14}$';

/** Messages for pattern failures, keyed by the pattern. */
export const PATTERN_MESSAGES: Record<string, string> = {
  [BASE64_PATTERN]: 'must be base64 (standard alphabet, padded)',
  [WELL_FORMED_TEXT_PATTERN]: 'must be well-formed Unicode (no lone surrogate)',
  [EMAIL_PATTERN]: 'must be an email address',
  [DECIMAL_ID_PATTERN]: 'must be a positive whole number (decimal digits)',
  [PRINTABLE_TEXT_PATTERN]: 'must be printable text, not blank (no control, format or invisible characters)',
};

/** Messages for format failures, keyed by the format. */
export const FORMAT_MESSAGES: Record<string, string> = {
  email: 'must be an email address',
  [SQL_TIME_FORMAT]: 'must be a UTC time as YYYY-MM-DD HH:MM:SS, years 0001 to 9999',
};

export const publicUserSchema = {
  $id: 'User',
  type: 'object',
  description: 'A car driver as the API shows it (never the password).',
  required: ['id', 'email', 'first_name', 'last_name', 'phone'],
  properties: {
    id: { type: 'integer' },
    email: { type: 'string' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    phone: { type: 'string' },
  },
} as const;

/** Error responses every route may give, by status. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string; description: string }> {
  const descriptions: Record<number, string> = {
    400: 'Malformed request (for example invalid JSON).',
    401: 'Not authenticated.',
    404: 'Not found.',
    413: 'Body larger than BODY_LIMIT_BYTES.',
    415: 'Unsupported Content-Type.',
    422: 'Invalid fields; details name each one.',
    500: 'Internal error (a bug).',
    503: "database_busy: another process holds the database's write lock; nothing was written. Retry after Retry-After seconds.",
  };
  return Object.fromEntries(
    statuses.map((status) => [status, { $ref: 'ErrorBody#', description: descriptions[status] ?? 'Error.' }]),
  );
}
