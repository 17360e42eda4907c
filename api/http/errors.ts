// One registry of the API's error codes: a stable code, an HTTP status and a
// default message. Every error body the API sends (but the two OAuth endpoints,
// which follow RFC 6749 section 5.2) is
//   {"error": code, "message": one sentence, "details": [{"path", "message"}]}.
// A test checks that each code is documented in docs/api.md's Errors table and in OpenAPI.

export const API_ERRORS = {
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  bad_request: { status: 400, message: 'The request is malformed.' },
  unauthorized: { status: 401, message: 'An access token is required: send Authorization: Bearer <token>.' },
  invalid_token: { status: 401, message: 'The access token is malformed, unknown, revoked or expired.' },
  invalid_client: { status: 401, message: 'Unknown client application or wrong client secret.' },
  invalid_ticket: {
    status: 401,
    message:
      'The event stream ticket is missing, unknown, used or expired: get a fresh one (POST /api/operator/events/tickets), or send Authorization: Bearer <operator token>.',
  },
  missing_parameter: { status: 400, message: 'A required parameter is missing; details name it.' },
  operator_required: {
    status: 403,
    message: "This route is for operators: send an operator token (parkbench admin operator add), not a driver's.",
  },
  smart_key_revoked: { status: 403, message: 'The smart key was revoked by an operator: it opens nothing any more.' },
  not_found: { status: 404, message: 'No such route.' },
  resource_not_found: { status: 404, message: 'No such resource; details name the id.' },
  request_timeout: { status: 408, message: 'The request was not received in time; the connection is closed.' },
  operation_refused: {
    status: 409,
    message: 'The operation conflicts with the current state (taken, full or forbidden now); details say why.',
  },
  box_reserved: {
    status: 409,
    message:
      "The box is reserved by another holder (the body names the holder, the note and the expiry): send the reservation's token in Parkbench-Reservation, or wait for its release.",
  },
  body_too_large: { status: 413, message: 'The request body is larger than the limit.' },
  uri_too_long: { status: 414, message: 'A path parameter of the URL is too long.' },
  unsupported_media_type: { status: 415, message: 'The request body must be application/json.' },
  expectation_failed: { status: 417, message: 'The Expect header asks for something the server does not do.' },
  validation_failed: { status: 422, message: 'The request has invalid fields; see details.' },
  session_refused: { status: 422, message: 'The parking session cannot be created; see details.' },
  session_finished: { status: 422, message: 'The parking session is already finished or finalized.' },
  parking_not_online: {
    status: 422,
    message: "The smart key's parking is not online: the phone sends access_command to the box itself.",
  },
  too_many_sessions: {
    status: 429,
    message: 'The driver created parking sessions too fast; retry after the Retry-After seconds.',
  },
  header_fields_too_large: { status: 431, message: 'The request headers are larger than the limit.' },
  internal_error: { status: 500, message: 'Internal error.' },
  bad_box_response: { status: 502, message: 'The box answered with bytes that are not a response frame.' },
  mqtt_publish_refused: {
    status: 502,
    message: "The MQTT broker refused the publish (its reason code in details): check the API's account in its ACL.",
  },
  database_busy: {
    status: 503,
    message:
      'The database is busy: another process holds its write lock. Retry after the Retry-After seconds; nothing was written.',
  },
  mqtt_unavailable: {
    status: 503,
    message: 'No MQTT broker is connected, so the box cannot be reached through the server.',
  },
  page_not_built: {
    status: 503,
    message: 'The bench page is not built: run `npm run build` (npm install runs it).',
  },
  box_timeout: { status: 504, message: 'The box did not answer in time.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** Codes of the OAuth endpoints' RFC 6749 5.2 bodies `{error, error_description}`. */
export const OAUTH_ERRORS = {
  invalid_request: { status: 400, message: 'A parameter is missing, repeated, of the wrong type or not allowed.' },
  invalid_client: { status: 401, message: 'Client authentication failed.' },
  invalid_grant: {
    status: 400,
    message: 'Wrong username or password, or the refresh token is unknown, revoked or expired.',
  },
  unsupported_grant_type: { status: 400, message: 'grant_type must be password or refresh_token.' },
  unsupported_media_type: { status: 415, message: 'Send application/x-www-form-urlencoded or application/json.' },
  too_many_failed_logins: { status: 429, message: 'Too many failed logins; retry after the Retry-After seconds.' },
  temporarily_unavailable: { status: 503, message: 'The database is busy; retry after the Retry-After seconds.' },
  server_error: { status: 500, message: 'Internal error.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type OAuthErrorCode = keyof typeof OAUTH_ERRORS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: string;
  message: string;
  details: ErrorDetail[];
}

/** Fields a code adds to its body beside error, message and details
 * (box_reserved: the reservation's holder, note and expiry), each described
 * in the ErrorBody schema below. */
export interface ErrorBodyFields {
  holder?: string;
  note?: string | null;
  expires_at?: string;
}

/** An error a route throws on purpose; the error handler turns it into the body. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    message?: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
    readonly fields: ErrorBodyFields = {},
  ) {
    super(message ?? API_ERRORS[code].message);
    this.name = 'ApiError';
    this.status = API_ERRORS[code].status;
  }

  body(): ErrorBody & ErrorBodyFields {
    return { error: this.code, message: this.message, details: this.details, ...this.fields };
  }
}

/** An error of the OAuth endpoints (RFC 6749 5.2 body). */
export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly code: OAuthErrorCode,
    message?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? OAUTH_ERRORS[code].message);
    this.name = 'OAuthError';
    this.status = OAUTH_ERRORS[code].status;
  }

  body(): { error: string; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

/** JSON schema of the error body, for every route's 4xx/5xx responses. */
export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'The error body of every route but the OAuth endpoints.',
  required: ['error', 'message', 'details'],
  properties: {
    error: { type: 'string', enum: Object.keys(API_ERRORS), description: 'Stable error code (see the registry).' },
    message: { type: 'string', description: 'One sentence for a person.' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: {
          path: {
            type: 'string',
            description:
              'Dotted path of the field in the body, e.g. api_car_driver_fo_user.email; $ is the body itself.',
          },
          message: { type: 'string' },
        },
      },
    },
    holder: {
      type: 'string',
      description: "box_reserved only: the operator who holds the box's reservation.",
    },
    note: {
      type: ['string', 'null'],
      description: "box_reserved only: the reservation's note (null without one).",
    },
    expires_at: {
      type: 'string',
      description: 'box_reserved only: when the reservation ends unless its holder renews it (ISO 8601).',
    },
  },
} as const;

export const oauthErrorBodySchema = {
  $id: 'OAuthErrorBody',
  type: 'object',
  description: 'RFC 6749 section 5.2 error body, used by /api/oauth/token and /api/oauth/revoke.',
  required: ['error', 'error_description'],
  properties: {
    error: { type: 'string', enum: Object.keys(OAUTH_ERRORS) },
    error_description: { type: 'string' },
  },
} as const;
