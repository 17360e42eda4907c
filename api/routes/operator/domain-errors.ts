// The operator's domain refuses with a DomainError of a kind (api/domain-error.ts);
// the operator HTTP API maps each kind to a status of the registry, naming
// the request field the refusal is about.
import { DomainError, type DomainErrorKind } from '../../domain-error.js';
import { ApiError, type ApiErrorCode } from '../../errors.js';

const CODE_OF_KIND: Record<DomainErrorKind, ApiErrorCode | undefined> = {
  not_found: 'resource_not_found',
  conflict: 'operation_refused',
  refused: 'operation_refused',
  // The work could not be done: a fault of ours, not of the request.
  failed: undefined,
};

/** Runs `work`; a DomainError becomes the ApiError of its kind, about `field`. */
export function answering<T>(field: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const code = CODE_OF_KIND[error.kind];
    if (code === undefined) throw error;
    throw new ApiError(code, undefined, [{ path: field, message: error.message }]);
  }
}

/** `answering` for work that resolves (a repository on the store, issue 18). */
export async function answeringAsync<T>(field: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    return answering(field, () => {
      throw error;
    });
  }
}
