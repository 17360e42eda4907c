// The session service's refusals (api/sessions/errors.ts) as the registry's
// HTTP errors: not found is 404 resource_not_found; a refused creation 422
// session_refused; a refused finalize (the session already ended) 422
// session_finished. Each reason is a detail on the field it is about. A
// creation past the driver's limit is 429 too_many_sessions with Retry-After.
import { ApiError, type ApiErrorCode } from '../errors.js';
import { SessionCreateLimited, SessionError } from '../sessions/errors.js';

/** Where a creation names its parking, and a finalize its session. */
const PATHS = { parking: 'parking_session.secured_parking_id', session: 'id' } as const;

export function sessionApiError(error: SessionError): ApiError {
  const code: ApiErrorCode =
    error.kind === 'not_found'
      ? 'resource_not_found'
      : error.subject === 'parking'
        ? 'session_refused'
        : 'session_finished';
  const path = PATHS[error.subject];
  return new ApiError(
    code,
    undefined,
    error.reasons.map((message) => ({ path, message })),
  );
}

/** 429 too_many_sessions, Retry-After in whole seconds (at least 1). */
export function sessionLimitApiError(error: SessionCreateLimited): ApiError {
  const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  return new ApiError('too_many_sessions', undefined, [{ path: 'parking_session', message: error.message }], {
    'Retry-After': String(seconds),
  });
}

/** Runs a call of the session service, its refusals turned into ApiErrors. */
export async function withSessionErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SessionError) throw sessionApiError(error);
    if (error instanceof SessionCreateLimited) throw sessionLimitApiError(error);
    throw error;
  }
}
