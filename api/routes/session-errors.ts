// The session service's refusals (api/sessions/errors.ts) as the registry's
// HTTP errors: not found is 404 resource_not_found; a refused creation 422
// session_refused; a refused finalize (the session already ended) 422
// session_finished. Each reason is a detail on the field it is about.
import { ApiError, type ApiErrorCode } from '../errors.js';
import { SessionError } from '../sessions/errors.js';

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

/** Runs a call of the session service, its refusals turned into ApiErrors. */
export async function withSessionErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof SessionError ? sessionApiError(error) : error;
  }
}
