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

/** A driver (the password hash is not a real one); its id. */
export async function insertUser(store: Store, email: string, createdAt: number): Promise<number> {
  const row = await store.kysely
    .insertInto('users')
    .values({ email, password_hash: 'x', first_name: 'A', last_name: 'B', phone: '1', created_at: createdAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A box of a parking (keys and credentials are placeholders); its id. */
export async function insertBox(
  store: Store,
  fields: { moduleId: number; parkingId: number; direction: 'entrance' | 'exit'; createdAt: number },
): Promise<number> {
  const row = await store.kysely
    .insertInto('boxes')
    .values({
      module_id: fields.moduleId,
      parking_id: fields.parkingId,
      direction: fields.direction,
      mac_address: `02:00:00:00:${(fields.moduleId >> 8) & 0xff}:${fields.moduleId & 0xff}`,
      box_key: '00'.repeat(16),
      mqtt_username: `box-${fields.moduleId}`,
      mqtt_password_hash: 'x',
      created_at: fields.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
