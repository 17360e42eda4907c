// The domain (api/boxes/, api/parkings/, api/sessions/, api/box-logs/,
// api/mqtt/clients.ts, ...) refuses with a DomainError: a kind a caller can
// map (the admin CLI to its one-line message and exit code 1, the HTTP API's
// error handler to a status of the registry, api/http/error-handler.ts) and a
// message meant for the operator. It says what the refusal is about in the
// request's own terms (the field paths) and, where the kind alone is too
// coarse for a client, which registry code names it. Never an HTTP type
// nor a CLI one: the registry's codes are plain names.
import type { ApiErrorCode, ErrorBodyFields } from './errors.js';

/** `not_found`: an id that names nothing; `conflict`: taken or full;
 * `refused`: a state that forbids it; `failed`: the work could not be done
 * (a file not written), nothing changed unless the message says so. */
export type DomainErrorKind = 'not_found' | 'conflict' | 'refused' | 'failed';

/** One problem: the field of the request it is about (a dotted path such as
 * `box_logs[3].box_log.equipment_id`), and what is wrong with it. */
export interface DomainProblem {
  readonly path: string;
  readonly message: string;
}

/** What an HTTP answer needs beyond the kind; each is optional. */
export interface DomainErrorAnswer {
  /** The problems, each on its field; without them the error handler names
   * the field the route declares (`refusalField`) with the message. */
  readonly problems?: readonly DomainProblem[];
  /** The registry code when the kind's own (404 resource_not_found, 409
   * operation_refused) is not what the route answers. */
  readonly code?: ApiErrorCode;
  /** The answer's sentence when the code's default does not fit. */
  readonly summary?: string;
  /** When the same request may succeed, ms (answered as Retry-After). */
  readonly retryAfterMs?: number;
  /** Fields of the body beside error, message and details (box_reserved's holder, note, expires_at). */
  readonly fields?: ErrorBodyFields;
}

export class DomainError extends Error {
  override readonly name: string = 'DomainError';

  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly answer: DomainErrorAnswer = {},
  ) {
    super(message);
  }
}

export const notFound = (message: string): DomainError => new DomainError('not_found', message);
export const conflict = (message: string): DomainError => new DomainError('conflict', message);
export const refused = (message: string): DomainError => new DomainError('refused', message);
export const failed = (message: string): DomainError => new DomainError('failed', message);
