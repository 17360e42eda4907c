// How the session service refuses: a DomainError (never an HTTP type) that
// says what it is about, the parking a session was asked for or the session
// named, with one reason per problem found. The parking session routes map it
// to the registry's codes (api/routes/session-errors.ts); MQTT ingestion and
// the admin CLI read its kind and message.
import { DomainError } from '../domain-error.js';

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
