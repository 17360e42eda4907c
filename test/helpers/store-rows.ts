// Rows written straight into a store, for repository tests on both engines
// that need a row to refer to (a parking for boxes, commands, outbox rows)
// without the services that make one for real.
import type { Insertable } from 'kysely';
import type { SecuredParkingsTable } from '../../api/db/schema.js';
import type { Store } from '../../api/db/store.js';

/** A sealed parking, 1.00 EUR an hour, 3 tries; `fields` override any column. Its id. */
export async function insertParking(
  store: Store,
  fields: Partial<Insertable<SecuredParkingsTable>> & Pick<Insertable<SecuredParkingsTable>, 'created_at'>,
): Promise<number> {
  const row = await store.kysely
    .insertInto('secured_parkings')
    .values({
      name: 'P',
      currency: 'EUR',
      price_per_hour_minor: 100,
      max_duration_minutes: 60,
      tries: 3,
      access_mode: 'sealed',
      parking_key: '00'.repeat(16),
      ...fields,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
