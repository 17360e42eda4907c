// The operator's domain (api/boxes/, api/parkings/, api/mqtt/clients.ts, ...)
// refuses with a DomainError: a kind a caller can map (the admin CLI to its
// one-line message and exit code 1, the coming operator HTTP API to a status)
// and a message meant for the operator. Never an HTTP type nor a CLI one.

/** `not_found`: an id that names nothing; `conflict`: taken or full;
 * `refused`: a state that forbids it; `failed`: the work could not be done
 * (a file not written), nothing changed unless the message says so. */
export type DomainErrorKind = 'not_found' | 'conflict' | 'refused' | 'failed';

export class DomainError extends Error {
  override readonly name: string = 'DomainError';

  constructor(
    readonly kind: DomainErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (message: string): DomainError => new DomainError('not_found', message);
export const conflict = (message: string): DomainError => new DomainError('conflict', message);
export const refused = (message: string): DomainError => new DomainError('refused', message);
export const failed = (message: string): DomainError => new DomainError('failed', message);
