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

// Box-log ingestion (CORE, issue 18): the rows a batch of box logs reads.

let nextSeed = 1;

/** A driver. Its id. */
export async function insertUser(store: Store, createdAt: number): Promise<number> {
  const n = nextSeed++;
  const row = await store.kysely
    .insertInto('users')
    .values({
      email: `driver-${n}-${createdAt}@example.org`,
      password_hash: 'x',
      first_name: 'D',
      last_name: String(n),
      phone: '+33100000000',
      created_at: createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A box of `parkingId` under `boxKey` (32 hex digits). */
export async function insertBox(
  store: Store,
  fields: { moduleId: number; parkingId: number; direction: 'entrance' | 'exit'; boxKey: string; createdAt: number },
): Promise<void> {
  await store.kysely
    .insertInto('boxes')
    .values({
      module_id: fields.moduleId,
      parking_id: fields.parkingId,
      direction: fields.direction,
      mac_address: `02:00:00:${[16, 8, 0].map((shift) => ((fields.moduleId >> shift) & 0xff).toString(16).padStart(2, '0')).join(':')}`,
      box_key: fields.boxKey,
      mqtt_username: `box-${fields.moduleId}`,
      mqtt_password_hash: 'x',
      created_at: fields.createdAt,
    })
    .execute();
}

/** A session of `userId` at `parkingId` (entering unless `state`), `tries` each way, 60 minutes. Its id. */
export async function insertSession(
  store: Store,
  fields: {
    userId: number;
    parkingId: number;
    startTime: number;
    state?: 'entering' | 'active' | 'exiting' | 'finished';
    tries?: number;
    amountMinor?: number;
  },
): Promise<number> {
  const row = await store.kysely
    .insertInto('parking_sessions')
    .values({
      user_id: fields.userId,
      parking_id: fields.parkingId,
      state: fields.state ?? 'entering',
      start_time: fields.startTime,
      end_time: fields.startTime + 3_600_000,
      entrance_remaining_tries: fields.tries ?? 3,
      exit_remaining_tries: fields.tries ?? 3,
      amount_minor: fields.amountMinor ?? 100,
      currency: 'EUR',
      created_at: fields.startTime,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A session's smart key (`id`: the ACCESS frames' key id). */
export async function insertSmartKey(
  store: Store,
  fields: {
    id: number;
    userId: number;
    parkingId: number;
    sessionId: number | null;
    moduleIds: number[];
    startTime: number;
  },
): Promise<void> {
  await store.kysely
    .insertInto('smart_keys')
    .values({
      id: fields.id,
      user_id: fields.userId,
      parking_id: fields.parkingId,
      session_id: fields.sessionId,
      type: 'access',
      purpose: 'session',
      access_command: Buffer.alloc(0),
      module_ids: JSON.stringify(fields.moduleIds),
      start_time: fields.startTime,
      end_time: fields.startTime + 3_600_000,
      created_at: fields.startTime,
    })
    .execute();
}

/** A payment of a session (the session's window, paid unless `state`). */
export async function insertPayment(
  store: Store,
  fields: { sessionId: number; amountMinor: number; state?: 'pending' | 'paid'; createdAt: number },
): Promise<void> {
  await store.kysely
    .insertInto('payments')
    .values({
      session_id: fields.sessionId,
      provider: 'sandbox',
      token: `token-${nextSeed++}-${fields.sessionId}`,
      purpose: 'session',
      amount_minor: fields.amountMinor,
      currency: 'EUR',
      state: fields.state ?? 'paid',
      created_at: fields.createdAt,
      updated_at: fields.createdAt,
    })
    .execute();
}
