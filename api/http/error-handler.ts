// Maps every error to the one error body, so that nothing a client sends ever
// gives a 500: fastify's own errors (bad JSON, body too large, bad media type,
// schema validation) become 4xx with stable codes, and the domain's refusals
// (DomainError, api/http/domain-error.ts) the code of their kind or the one they
// carry, here and nowhere else. Only real bugs give 500, logged with their stack.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseBusy } from '../db/busy.js';
import { DomainError, type DomainErrorKind } from './domain-error.js';
import { ApiError, OAuthError, type ApiErrorCode, type ErrorDetail } from './errors.js';
import { FORMAT_MESSAGES, PATTERN_MESSAGES } from './schemas.js';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** ajv's "/a/0/b" -> "a[0].b"; "$" is the body itself. */
export function dottedPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (extra !== undefined) parts.push(extra);
  let path = '';
  for (const raw of parts) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else path += path === '' ? part : `.${part}`;
  }
  return path === '' ? '$' : path;
}

function issueMessage(issue: AjvIssue): string {
  const params = issue.params;
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be of type ${String(params.type)}`;
    case 'minLength':
      return `must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'format':
      return FORMAT_MESSAGES[String(params.format)] ?? `must be a valid ${String(params.format)}`;
    case 'pattern':
      return PATTERN_MESSAGES[String(params.pattern)] ?? 'has an invalid format';
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} elements`;
    default:
      return issue.message ?? 'is invalid';
  }
}

/** Details past this many are dropped (the first ones say enough; a batch
 * of a thousand bad box logs would otherwise answer with thousands). */
const MAX_DETAILS = 100;

export function validationDetails(issues: readonly AjvIssue[]): ErrorDetail[] {
  return issues.slice(0, MAX_DETAILS).map((issue) => ({
    path: dottedPath(
      issue.instancePath,
      issue.keyword === 'required' ? String(issue.params.missingProperty) : undefined,
    ),
    message: issueMessage(issue),
  }));
}

/** Route config (fastify's `config`) of a route whose spec tells a
 * parameter missing (400 missing_parameter) from one of the wrong type (422
 * validation_failed), such as POST /api/car_driver/parking_sessions. */
export const MISSING_IS_400 = { missingParameter: true } as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    missingParameter?: boolean;
    /** The request field a route's domain refusals are about when they name
     * none themselves (`id`, `module_id`, ...): see `refusalsAbout`. */
    refusalField?: string;
  }
}

/** Route config (fastify's `config`) naming the request field that a
 * DomainError of the route is about, when the error names no field itself:
 * the operator's domain says "no parking 7", the route knows it is `id`. */
export function refusalsAbout(field: string): { refusalField: string } {
  return { refusalField: field };
}

/** The registry code of each kind; `failed` is a fault of ours, not of the
 * request: a 500 like any bug. */
const CODE_OF_KIND: Record<DomainErrorKind, ApiErrorCode | undefined> = {
  not_found: 'resource_not_found',
  conflict: 'operation_refused',
  refused: 'operation_refused',
  failed: undefined,
};

/** The ApiError of a domain refusal: the code it carries or its kind's, its
 * problems as details (or its message on the route's field, `$` when the
 * route names none), Retry-After in whole seconds (at least 1) when it says
 * when to retry. Undefined for a `failed` one. */
export function domainApiError(error: DomainError, routeField: string | undefined): ApiError | undefined {
  const { problems, code = CODE_OF_KIND[error.kind], summary, retryAfterMs, fields } = error.answer;
  if (code === undefined) return undefined;
  const details = problems?.map(({ path, message }) => ({ path, message })) ?? [
    { path: routeField ?? '$', message: error.message },
  ];
  const headers: Record<string, string> =
    retryAfterMs === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
  return new ApiError(code, summary, details, headers, fields);
}

function domainError(error: Error, request: FastifyRequest): ApiError | undefined {
  if (!(error instanceof DomainError)) return undefined;
  return domainApiError(error, request.routeOptions.config.refusalField);
}

function isMissingParameterRoute(request: FastifyRequest): boolean {
  return request.routeOptions.config.missingParameter === true;
}

/** The value at an ajv instance path ("/a/0/b") of `root`. */
function valueAt(root: unknown, instancePath: string): unknown {
  let value = root;
  for (const raw of instancePath.split('/').slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return value;
}

/** The issues of a body schema that say a parameter is missing, as details:
 * a required property absent or null, or a body that is no object at all
 * (then it lacks the schema's first required property). */
export function missingParameters(issues: readonly AjvIssue[], body: unknown, bodySchema: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.keyword === 'required') {
      details.push({
        path: dottedPath(issue.instancePath, String(issue.params.missingProperty)),
        message: 'is required',
      });
    } else if (issue.keyword === 'type' && issue.instancePath === '') {
      const required = (bodySchema as { required?: readonly string[] } | undefined)?.required?.[0];
      if (required !== undefined) details.push({ path: required, message: 'is required' });
    } else if (issue.keyword === 'type' && valueAt(body, issue.instancePath) === null) {
      details.push({ path: dottedPath(issue.instancePath), message: 'is required' });
    }
  }
  return details;
}

/** fastify error codes a client can cause, and what they become. */
const CLIENT_ERRORS: Record<string, ApiErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
};

/** Seconds a client is asked to wait when the database is busy. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** The ApiError an error stands for, or undefined for a bug. */
export function toApiError(error: FastifyError | ApiError): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (isDatabaseBusy(error))
    return new ApiError('database_busy', undefined, [], { 'Retry-After': String(BUSY_RETRY_AFTER_SECONDS) });
  if (error.validation) return new ApiError('validation_failed', undefined, validationDetails(error.validation));
  const mapped = error.code ? CLIENT_ERRORS[error.code] : undefined;
  if (mapped) return new ApiError(mapped);
  // JSON.parse failures (and prototype poisoning) surface as 400 SyntaxErrors.
  if (error instanceof SyntaxError || error.statusCode === 400)
    return new ApiError(error instanceof SyntaxError ? 'malformed_json' : 'bad_request');
  if (error.statusCode === 413) return new ApiError('body_too_large');
  // @fastify/static (under /docs) refuses a path outside its root or with a
  // NUL with 403 or 400: as for any path it does not serve, there is no such route.
  if (error.statusCode === 403 || error.statusCode === 404) return new ApiError('not_found');
  if (error.statusCode === 415) return new ApiError('unsupported_media_type');
  return undefined;
}

/** A body schema's issues on a MISSING_IS_400 route: 400 when a parameter is missing. */
function missingParameterError(error: FastifyError, request: FastifyRequest): ApiError | undefined {
  if (!error.validation || error.validationContext !== 'body' || !isMissingParameterRoute(request)) return undefined;
  const details = missingParameters(error.validation, request.body, request.routeOptions.schema?.body);
  return details.length > 0 ? new ApiError('missing_parameter', undefined, details) : undefined;
}

export function apiErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError =
    missingParameterError(error, request) ??
    domainError(error, request) ??
    toApiError(error) ??
    internal(error, request);
  if (apiError.code === 'database_busy') request.log.warn({ err: error }, 'database busy: answered 503');
  void reply.status(apiError.status).headers(apiError.headers).send(apiError.body());
}

function internal(error: Error, request: FastifyRequest): ApiError {
  request.log.error({ err: error }, 'unhandled error');
  return new ApiError('internal_error');
}

/** The OAuth endpoints answer RFC 6749 5.2 bodies instead. */
export function oauthErrorHandler(
  error: FastifyError | OAuthError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  let oauth: OAuthError;
  if (error instanceof OAuthError) oauth = error;
  else {
    const apiError = toApiError(error);
    if (!apiError) {
      request.log.error({ err: error }, 'unhandled error');
      oauth = new OAuthError('server_error');
    } else if (apiError.code === 'database_busy') {
      request.log.warn({ err: error }, 'database busy: answered 503');
      oauth = new OAuthError('temporarily_unavailable', undefined, apiError.headers);
    } else if (apiError.code === 'unsupported_media_type') {
      oauth = new OAuthError('unsupported_media_type');
    } else if (apiError.code === 'body_too_large') {
      // RFC 6749 has no code for it; keep the HTTP meaning.
      void reply.status(413).send({ error: 'invalid_request', error_description: apiError.message });
      return;
    } else {
      const detail = apiError.details[0];
      const description =
        detail === undefined
          ? apiError.message
          : detail.path === '$'
            ? 'The body must be a JSON object or form-encoded parameters.'
            : `${detail.path} ${detail.message}.`;
      oauth = new OAuthError('invalid_request', description);
    }
  }
  void reply
    .status(oauth.status)
    .headers({ ...oauth.headers, 'Cache-Control': 'no-store', Pragma: 'no-cache' })
    .send(oauth.body());
}
