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

/** A box of a parking (entrance, skew 120 s by the table's default unless given); its module id. */
export async function insertBox(
  store: Store,
  fields: { moduleId: number; parkingId: number; createdAt: number; skewSeconds?: number },
): Promise<number> {
  const hex = fields.moduleId.toString(16).padStart(8, '0');
  await store.kysely
    .insertInto('boxes')
    .values({
      module_id: fields.moduleId,
      parking_id: fields.parkingId,
      direction: 'entrance',
      mac_address: `02:00:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`,
      box_key: '11'.repeat(16),
      mqtt_username: `box-${fields.moduleId}`,
      mqtt_password_hash: 'x',
      created_at: fields.createdAt,
      ...(fields.skewSeconds === undefined ? {} : { skew_seconds: fields.skewSeconds }),
    })
    .execute();
  return fields.moduleId;
}

/** An operator's smart key of a parking for these boxes, valid from `startTime` to `endTime` (ms). */
export async function insertSmartKey(
  store: Store,
  fields: {
    id: number;
    parkingId: number;
    moduleIds: readonly number[];
    startTime: number;
    endTime: number;
    signedBy?: string;
  },
): Promise<number> {
  await store.kysely
    .insertInto('smart_keys')
    .values({
      id: fields.id,
      parking_id: fields.parkingId,
      type: 'test',
      purpose: 'operator',
      access_command: Buffer.alloc(8),
      module_ids: JSON.stringify(fields.moduleIds),
      start_time: fields.startTime,
      end_time: fields.endTime,
      created_at: fields.startTime,
      signed_by: fields.signedBy ?? null,
    })
    .execute();
  return fields.id;
}
