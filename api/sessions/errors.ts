// How the session service refuses: a DomainError (never an HTTP type) that
// says what it is about, the parking a session was asked for or the session
// named, with one reason per problem found. The parking session routes map it
// to the registry's codes (api/routes/session-errors.ts); MQTT ingestion and
// the admin CLI read its kind and message.
import { DomainError } from '../domain-error.js';
import type { SessionCreateLimits } from './create-limit.js';

/** What a refusal is about: the parking asked for, or the session named. */
export type SessionSubject = 'parking' | 'session';

export class SessionError extends DomainError {
  override readonly name: string = 'SessionError';

  constructor(
    override readonly kind: 'not_found' | 'refused',
    readonly subject: SessionSubject,
    readonly reasons: readonly [string, ...string[]],
  ) {
    super(kind, reasons.join('; '));
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
    super(
      'refused',
      `the driver created parking sessions too fast: at most ${limits.burst} at once, then one every ${limits.intervalMs / 1000} s; the next one in ${Math.ceil(retryAfterMs / 1000)} s`,
    );
  }
}
