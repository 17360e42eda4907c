// The derived availability of each box (api/mqtt/box-availability.ts), kept
// in the database so that every process reads it: the API process writes
// each change, `admin box status` and the operator API read it.
import type { Kysely, Selectable } from 'kysely';
import type { BoxAvailabilityTable, Schema } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { DerivedAvailability } from './derived-availability.js';

type AvailabilityRow = Pick<
  Selectable<BoxAvailabilityTable>,
  'module_id' | 'availability' | 'reason' | 'since' | 'gateway_id'
>;

export class BoxAvailabilityStore {
  readonly #kysely: Kysely<Schema>;

  constructor(store: Store) {
    this.#kysely = store.kysely;
  }

  /** One upsert (`excluded.*` on both engines): of two writers, the later statement's values stay. */
  async store(moduleId: number, derived: DerivedAvailability, nowMs: number): Promise<void> {
    await this.#kysely
      .insertInto('box_availability')
      .values({
        module_id: moduleId,
        availability: derived.availability,
        reason: derived.reason,
        since: derived.since,
        gateway_id: derived.gatewayId,
        updated_at: nowMs,
      })
      .onConflict((oc) =>
        oc.column('module_id').doUpdateSet((eb) => ({
          availability: eb.ref('excluded.availability'),
          reason: eb.ref('excluded.reason'),
          since: eb.ref('excluded.since'),
          gateway_id: eb.ref('excluded.gateway_id'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }

  /** Forgets everything: an embedded broker starts with no retained message, so nothing is known. */
  async clear(): Promise<void> {
    await this.#kysely.deleteFrom('box_availability').execute();
  }

  find(moduleId: number): Promise<AvailabilityRow | undefined> {
    return this.#kysely
      .selectFrom('box_availability')
      .select(['module_id', 'availability', 'reason', 'since', 'gateway_id'])
      .where('module_id', '=', moduleId)
      .executeTakeFirst();
  }
}
