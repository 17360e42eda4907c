// How box-log ingestion refuses a batch: a DomainError (never an HTTP type),
// thrown before anything is written. `not_found`: an id names nothing;
// `refused`: ids exist but do not fit (a key of another driver or parking, a
// box of another parking, a driver who is not the sender). Each detail names
// the element and field (`box_logs[3].box_log.equipment_id`). POST
// /api/box_logs answers not found with 404 resource_not_found and a refusal
// with 422 validation_failed (ids that do not fit are invalid fields), the
// details as they are (api/error-handler.ts); MQTT ingestion counts it as
// refused_by_api.
import { DomainError, type DomainProblem } from '../http/domain-error.js';

/** One problem: which element's field, and what is wrong with it. */
export type BoxLogProblem = DomainProblem;

export class BoxLogRefusal extends DomainError {
  override readonly name: string = 'BoxLogRefusal';

  constructor(
    override readonly kind: 'not_found' | 'refused',
    readonly details: readonly BoxLogProblem[],
  ) {
    super(
      kind,
      `${kind === 'not_found' ? 'an id of the box logs names nothing' : 'ids of the box logs do not fit together'}: ${details.map((detail) => `${detail.path} ${detail.message}`).join('; ')}`,
      kind === 'not_found'
        ? { problems: details, summary: 'An id in the box logs does not exist; details name it.' }
        : { problems: details, code: 'validation_failed' },
    );
  }
}
