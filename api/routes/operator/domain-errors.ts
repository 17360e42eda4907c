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

/** Runs `work`; a DomainError becomes the ApiError of its kind, about
 * `field`. A promise `work` returns is answered the same when it rejects. */
export function answering<T>(field: string, work: () => T): T {
  try {
    const result = work();
    if (result instanceof Promise)
      return result.catch((error: unknown) => {
        throw answerOf(field, error);
      }) as T;
    return result;
  } catch (error) {
    throw answerOf(field, error);
  }
}

function answerOf(field: string, error: unknown): unknown {
  if (!(error instanceof DomainError)) return error;
  const code = CODE_OF_KIND[error.kind];
  if (code === undefined) return error;
  return new ApiError(code, undefined, [{ path: field, message: error.message }]);
}
