// JSON schemas shared by routes (and so by the OpenAPI document).

/** Emails: a pragmatic check (one @, a dotted domain, no spaces), as
 * registration forms do; deliverability is not the API's business. */
export const EMAIL_PATTERN = "^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$";
/** At least one character that is not white space. */
export const NOT_BLANK_PATTERN = '\\S';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;
export const EMAIL_MAX_LENGTH = 254;
export const NAME_MAX_LENGTH = 100;
export const PHONE_MAX_LENGTH = 32;

/** Messages for pattern failures, keyed by the pattern. */
export const PATTERN_MESSAGES: Record<string, string> = {
  [EMAIL_PATTERN]: 'must be an email address',
  [NOT_BLANK_PATTERN]: 'must not be blank',
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
    503: 'database_busy: another process holds the database\'s write lock; nothing was written. Retry after Retry-After seconds.',
  };
  return Object.fromEntries(statuses.map((status) => [status, { $ref: 'ErrorBody#', description: descriptions[status] ?? 'Error.' }]));
}
