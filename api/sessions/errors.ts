// How the session service refuses: a DomainError (never an HTTP type) that
// says what it is about, the parking a session was asked for or the session
// named, with one reason per problem found, each on the request field that
// names it. The HTTP error handler answers not found with 404
// resource_not_found, a refused creation with 422 session_refused, a refused
// finalize (the session already ended) with 422 session_finished, and a
// creation past the driver's limit with 429 too_many_sessions and
// Retry-After; MQTT ingestion and the admin CLI read its kind and message.
import { DomainError } from '../http/domain-error.js';
import type { SessionCreateLimits } from './create-limit.js';

/** What a refusal is about: the parking asked for, or the session named. */
export type SessionSubject = 'parking' | 'session';

/** Where a creation names its parking, and a finalize its session. */
const PATHS = { parking: 'parking_session.secured_parking_id', session: 'id' } as const;

export class SessionError extends DomainError {
  override readonly name: string = 'SessionError';

  constructor(
    override readonly kind: 'not_found' | 'refused',
    readonly subject: SessionSubject,
    readonly reasons: readonly [string, ...string[]],
  ) {
    super(kind, reasons.join('; '), {
      problems: reasons.map((message) => ({ path: PATHS[subject], message })),
      ...(kind === 'refused' ? { code: subject === 'parking' ? 'session_refused' : 'session_finished' } : {}),
    });
  }
}

/** The driver's creations went past SESSION_CREATE_BURST at once and
 * SESSION_CREATE_RATE_PER_MINUTE after (create-limit.ts): nothing was created. */
export class SessionCreateLimited extends DomainError {
  override readonly name: string = 'SessionCreateLimited';

  constructor(
    /** Until a token is back, ms. */
    readonly retryAfterMs: number,
    readonly limits: SessionCreateLimits,
  ) {
    const message = `the driver created parking sessions too fast: at most ${limits.burst} at once, then one every ${limits.intervalMs / 1000} s; the next one in ${Math.ceil(retryAfterMs / 1000)} s`;
    super('refused', message, {
      problems: [{ path: 'parking_session', message }],
      code: 'too_many_sessions',
      retryAfterMs,
    });
  }
}
