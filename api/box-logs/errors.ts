// How box-log ingestion refuses a batch: a DomainError (never an HTTP type),
// thrown before anything is written. `not_found`: an id names nothing;
// `refused`: ids exist but do not fit (a key of another driver or parking, a
// box of another parking, a driver who is not the sender). Each detail names
// the element and field (`box_logs[3].box_log.equipment_id`). POST
// /api/box_logs maps it through the registry (api/routes/box-log-errors.ts);
// MQTT ingestion counts it as refused_by_api.
import { DomainError } from '../domain-error.js';

/** One problem: which element's field, and what is wrong with it. */
export interface BoxLogProblem {
  readonly path: string;
  readonly message: string;
}

export class BoxLogRefusal extends DomainError {
  override readonly name: string = 'BoxLogRefusal';

  constructor(
    override readonly kind: 'not_found' | 'refused',
    readonly details: readonly BoxLogProblem[],
  ) {
    super(
      kind,
      `${kind === 'not_found' ? 'an id of the box logs names nothing' : 'ids of the box logs do not fit together'}: ${details.map((detail) => `${detail.path} ${detail.message}`).join('; ')}`,
    );
  }
}
