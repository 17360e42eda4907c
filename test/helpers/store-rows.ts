// Rows written straight into a store, for repository tests on both engines
// that need a row to refer to (a parking for boxes, commands, outbox rows)
// without the services that make one for real.
import type { Insertable } from 'kysely';
import type { Schema, SecuredParkingsTable } from '../../api/db/schema.js';
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

// Box-log ingestion: the rows a batch of box logs reads.

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

/** A box of a parking: an entrance under the key 11...11, skew 120 s (the
 * table's default) unless given; its module id. */
export async function insertBox(
  store: Store,
  fields: {
    moduleId: number;
    parkingId: number;
    createdAt: number;
    direction?: 'entrance' | 'exit';
    /** 32 hex digits. */
    boxKey?: string;
    skewSeconds?: number;
  },
): Promise<number> {
  const hex = fields.moduleId.toString(16).padStart(8, '0');
  await store.kysely
    .insertInto('boxes')
    .values({
      module_id: fields.moduleId,
      parking_id: fields.parkingId,
      direction: fields.direction ?? 'entrance',
      mac_address: `02:00:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`,
      box_key: fields.boxKey ?? '11'.repeat(16),
      mqtt_username: `box-${fields.moduleId}`,
      mqtt_password_hash: 'x',
      created_at: fields.createdAt,
      ...(fields.skewSeconds === undefined ? {} : { skew_seconds: fields.skewSeconds }),
    })
    .execute();
  return fields.moduleId;
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

/**
 * A smart key of a parking for these boxes (`id`: the ACCESS frames' key
 * id), valid from `startTime` to `endTime` (an hour unless given): a
 * driver's session key with `userId` and `sessionId`, else an operator's.
 */
export async function insertSmartKey(
  store: Store,
  fields: {
    id: number;
    parkingId: number;
    moduleIds: readonly number[];
    startTime: number;
    endTime?: number;
    userId?: number;
    sessionId?: number | null;
    signedBy?: string;
  },
): Promise<number> {
  const driver = fields.userId !== undefined;
  await store.kysely
    .insertInto('smart_keys')
    .values({
      id: fields.id,
      ...(driver ? { user_id: fields.userId, session_id: fields.sessionId ?? null } : {}),
      parking_id: fields.parkingId,
      type: driver ? 'access' : 'test',
      purpose: driver ? 'session' : 'operator',
      access_command: Buffer.alloc(8),
      module_ids: JSON.stringify(fields.moduleIds),
      start_time: fields.startTime,
      end_time: fields.endTime ?? fields.startTime + 3_600_000,
      created_at: fields.startTime,
      signed_by: fields.signedBy ?? null,
    })
    .execute();
  return fields.id;
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

/** How many rows a table holds, on either engine. */
export async function rowCount(store: Store, table: keyof Schema): Promise<number> {
  const row = await store.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  // PostgreSQL's count is a bigint, which pg hands over as a string.
  return Number(row.n);
}
