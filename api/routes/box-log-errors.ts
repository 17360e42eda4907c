// Box-log ingestion's refusals (api/box-logs/errors.ts) as the registry's
// HTTP errors: an id that names nothing is 404 resource_not_found, ids that
// do not fit 422 validation_failed, each detail on the field it names.
import type { BoxLogRefusal } from '../box-logs/errors.js';
import { ApiError } from '../errors.js';

export function boxLogApiError(error: BoxLogRefusal): ApiError {
  const details = error.details.map(({ path, message }) => ({ path, message }));
  return error.kind === 'not_found'
    ? new ApiError('resource_not_found', 'An id in the box logs does not exist; details name it.', details)
    : new ApiError('validation_failed', undefined, details);
}
