// The derived availability of each box (api/mqtt/box-availability.ts), kept
// in the database so that every process reads it: the API process writes
// each change, `admin box status` and the operator API read it.
import type { Db } from '../db/open.js';
import type { AvailabilityValue, DerivedAvailability } from '../mqtt/box-availability.js';

interface AvailabilityRow {
  module_id: number;
  availability: AvailabilityValue;
  reason: string | null;
  since: number | null;
  gateway_id: string | null;
}

export class BoxAvailabilityStore {
  readonly #upsert;
  readonly #find;

  constructor(private readonly db: Db) {
    this.#upsert = db.prepare<[number, AvailabilityValue, string | null, number | null, string | null, number]>(
      `INSERT INTO box_availability (module_id, availability, reason, since, gateway_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (module_id) DO UPDATE SET availability = excluded.availability, reason = excluded.reason, since = excluded.since, gateway_id = excluded.gateway_id, updated_at = excluded.updated_at`,
    );
    this.#find = db.prepare<[number], AvailabilityRow>(
      'SELECT module_id, availability, reason, since, gateway_id FROM box_availability WHERE module_id = ?',
    );
  }

  store(moduleId: number, derived: DerivedAvailability, nowMs: number): void {
    this.#upsert.run(moduleId, derived.availability, derived.reason, derived.since, derived.gatewayId, nowMs);
  }

  /** Forgets everything: an embedded broker starts with no retained message, so nothing is known. */
  clear(): void {
    this.db.prepare('DELETE FROM box_availability').run();
  }

  find(moduleId: number): AvailabilityRow | undefined {
    return this.#find.get(moduleId);
  }
}
