// The forwarding outbox (spec 6): rows written with their box logs, grouped
// into deliveries of up to 100 records and 256 KiB for one URL, the
// deliveries' states, and the URLs a 410 Gone disabled. On the store:
// several API processes, on one SQLite file or one PostgreSQL
// database, share it, and
//
// - a waiting row is grouped into one delivery only: grouping runs in a
//   write transaction (SQLite's BEGIN IMMEDIATE serializes it) that, on
//   PostgreSQL, locks the rows it groups (FOR UPDATE OF o SKIP LOCKED: a
//   second process grouping at once skips them, and re-checks
//   `delivery_id IS NULL` on rows grouped meanwhile);
// - a due delivery is sent by one process at a time: `claim` is one
//   conditional UPDATE (the delivery's next attempt moves from the time it
//   was due to the end of a lease); of two processes claiming at once, the
//   second finds the condition false (PostgreSQL re-evaluates it on the
//   row the first updated), and a process that dies mid-delivery leaves it
//   due again when its lease ends;
// - only the lease holder records the attempt's outcome: the lease's end is
//   the fence (a later claim always moves it later), so a worker whose
//   lease expired and was taken over changes nothing.
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { ForwardingDeliveriesTable, Schema } from '../db/schema.js';
import { changed, type Store } from '../db/store.js';
import type { ForwardRow } from '../box-logs/index.js';
import type { ParkingRow } from '../parkings/index.js';
import { forwardRecord, MAX_RECORDS_PER_DELIVERY, recordsThatFit } from './record.js';

export { MAX_RECORDS_PER_DELIVERY } from './record.js';

export type DeliveryState = ForwardingDeliveriesTable['state'];

export type DeliveryRow = Pick<
  Selectable<ForwardingDeliveriesTable>,
  'id' | 'parking_id' | 'url' | 'state' | 'attempts' | 'next_attempt_at' | 'oldest_record_at' | 'last_error'
>;

/** A delivery taken for one attempt, until `until` (ms): the attempt's
 * outcome is recorded only while the lease is still this one. */
export interface Lease {
  deliveryId: string;
  until: number;
}

export interface UrlStatus {
  parking_id: number;
  url: string;
  pending: number;
  delivered: number;
  dead: number;
  last_error: string | null;
  last_attempt_at: number | null;
  /** When a 410 Gone disabled the URL (ms); null when it is enabled. */
  disabled_at: number | null;
}

/** What signs a parking's deliveries (api/forwarding/worker.ts liveSecrets). */
export type SigningSecrets = Pick<
  ParkingRow,
  'forwarding_secret' | 'forwarding_previous_secret' | 'forwarding_previous_secret_until'
>;

type DeliveriesScope = ExpressionBuilder<Schema, 'forwarding_deliveries'>;

/** No delivery of a URL a 410 disabled is due (the same condition in every query). */
const enabled = (eb: DeliveriesScope): Expression<SqlBool> =>
  eb.not(
    eb.exists(
      eb
        .selectFrom('forwarding_disabled_urls as x')
        .select(sql.lit(1).as('one'))
        .whereRef('x.parking_id', '=', 'forwarding_deliveries.parking_id')
        .whereRef('x.url', '=', 'forwarding_deliveries.url'),
    ),
  );

/** The columns of a forwarded record (ForwardRow), from box_logs as b and users as u. */
const RECORD_COLUMNS = [
  'b.id',
  'b.fo_user_id',
  'b.smart_key_id',
  'b.equipment_id',
  'b.secured_parking_id',
  'b.type',
  'b.command',
  'b.command_decrypted',
  'b.response',
  'b.response_decrypted',
  'b.offline',
  'b.created_at',
  'b.latitude',
  'b.longitude',
  'u.email',
  'b.verified',
] as const;

export class OutboxRepository {
  constructor(private readonly store: Store) {}

  /** Groups waiting rows into deliveries (one URL each, up to 100 records
   * and 256 KiB of body, whichever comes first); returns how many deliveries
   * were made. Rows another process is grouping at the same time are left
   * to it. */
  async groupWaiting(nowMs: number): Promise<number> {
    const { kysely } = this.store;
    return kysely.transaction().execute(async (trx) => {
      const urls = await trx
        .selectFrom('forwarding_outbox')
        .select(['url', 'parking_id'])
        .distinct()
        .where('delivery_id', 'is', null)
        .execute();
      let made = 0;
      for (const { url, parking_id: parkingId } of urls) {
        for (;;) {
          const waitingQuery = trx
            .selectFrom('forwarding_outbox as o')
            .innerJoin('box_logs as b', 'b.id', 'o.box_log_id')
            .leftJoin('users as u', 'u.id', 'b.fo_user_id')
            .select(['o.id as outbox_id', 'o.created_at as queued_at', ...RECORD_COLUMNS])
            .where('o.delivery_id', 'is', null)
            .where('o.url', '=', url)
            .where('o.parking_id', '=', parkingId)
            .orderBy('o.id')
            .limit(MAX_RECORDS_PER_DELIVERY);
          // The outbox rows only (not their box logs or users); SQLite's write transaction serializes instead.
          const waiting = await this.store
            .lockForUpdate(waitingQuery, { strength: 'update', of: 'o', skipLocked: true })
            .execute();
          if (waiting.length === 0) break;
          const rows = waiting.slice(
            0,
            recordsThatFit(waiting.map((row) => Buffer.byteLength(JSON.stringify(forwardRecord(row))))),
          );
          const id = randomUUID();
          await trx
            .insertInto('forwarding_deliveries')
            .values({
              id,
              parking_id: parkingId,
              url,
              state: 'pending',
              next_attempt_at: nowMs,
              oldest_record_at: Math.min(...rows.map((row) => row.queued_at)),
              created_at: nowMs,
            })
            .execute();
          const claimed = await trx
            .updateTable('forwarding_outbox')
            .set({ delivery_id: id })
            .where(
              'id',
              'in',
              rows.map((row) => row.outbox_id),
            )
            .where('delivery_id', 'is', null)
            .executeTakeFirst();
          // Locked (PostgreSQL) or serialized (SQLite): nobody else can have grouped them.
          if (changed(claimed) !== rows.length)
            throw new Error(`outbox rows grouped twice: ${changed(claimed)} of ${rows.length} claimed`);
          made += 1;
        }
      }
      return made;
    });
  }

  /** Pending deliveries due at `nowMs`, the earliest first. */
  async due(nowMs: number): Promise<DeliveryRow[]> {
    return this.store.kysely
      .selectFrom('forwarding_deliveries')
      .select(['id', 'parking_id', 'url', 'state', 'attempts', 'next_attempt_at', 'oldest_record_at', 'last_error'])
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowMs)
      .where(enabled)
      .orderBy('next_attempt_at')
      .execute();
  }

  /** Takes a due delivery for one attempt: its next attempt moves to
   * `leaseUntil`, so another pass (or process) does not send it meanwhile;
   * undefined when someone else took it first (or its URL was disabled
   * since). A crash mid-attempt leaves it due again at `leaseUntil`. One
   * conditional UPDATE, run just before each attempt (not a batch claimed
   * ahead: the deliveries of one URL go one at a time, and a lease taken
   * for those waiting their turn would run out before they are sent). */
  async claim(delivery: DeliveryRow, leaseUntil: number): Promise<Lease | undefined> {
    const result = await this.store.kysely
      .updateTable('forwarding_deliveries')
      .set({ next_attempt_at: leaseUntil })
      .where('id', '=', delivery.id)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '=', delivery.next_attempt_at)
      .where(enabled)
      .executeTakeFirst();
    return changed(result) === 1 ? { deliveryId: delivery.id, until: leaseUntil } : undefined;
  }

  /** Gives a claimed delivery back, due at `dueAt` (an attempt cut by
   * shutdown); false when the lease was no longer held. */
  async release(lease: Lease, dueAt: number): Promise<boolean> {
    const result = await this.store.kysely
      .updateTable('forwarding_deliveries')
      .set({ next_attempt_at: dueAt })
      .where((eb) => this.held(eb, lease))
      .executeTakeFirst();
    return changed(result) === 1;
  }

  async records(deliveryId: string): Promise<ForwardRow[]> {
    return this.store.kysely
      .selectFrom('forwarding_outbox as o')
      .innerJoin('box_logs as b', 'b.id', 'o.box_log_id')
      .leftJoin('users as u', 'u.id', 'b.fo_user_id')
      .select(RECORD_COLUMNS)
      .where('o.delivery_id', '=', deliveryId)
      .orderBy('o.id')
      .execute();
  }

  /** The attempt of `lease` delivered; false (nothing changed) when the
   * lease ran out and another worker holds the delivery now. */
  async markDelivered(lease: Lease, nowMs: number): Promise<boolean> {
    const result = await this.store.kysely
      .updateTable('forwarding_deliveries')
      .set((eb) => ({
        state: 'delivered',
        attempts: eb('attempts', '+', 1),
        last_attempt_at: nowMs,
        delivered_at: nowMs,
        last_error: null,
      }))
      .where((eb) => this.held(eb, lease))
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** The attempt of `lease` failed: due again at `retryAt`, or dead; false
   * (nothing changed) when the lease ran out and another worker holds the
   * delivery now. */
  async markFailed(
    lease: Lease,
    error: string,
    nowMs: number,
    next: { dead: true } | { dead: false; retryAt: number },
  ): Promise<boolean> {
    const result = await this.store.kysely
      .updateTable('forwarding_deliveries')
      .set((eb) => ({
        state: next.dead ? 'dead' : 'pending',
        attempts: eb('attempts', '+', 1),
        next_attempt_at: next.dead ? nowMs : next.retryAt,
        last_attempt_at: nowMs,
        last_error: error.slice(0, 500),
      }))
      .where((eb) => this.held(eb, lease))
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** The delivery is still pending under this lease (a later claim moved its next attempt elsewhere). */
  private held(eb: DeliveriesScope, lease: Lease): Expression<SqlBool> {
    return eb.and([
      eb('id', '=', lease.deliveryId),
      eb('state', '=', 'pending'),
      eb('next_attempt_at', '=', lease.until),
    ]);
  }

  /** Dead deliveries of a parking become pending again, due now, with a
   * fresh retry schedule; the URLs a 410 disabled are enabled, their
   * deliveries due now. Returns the deliveries revived and the URLs enabled. */
  async revive(parkingId: number, nowMs: number): Promise<{ revived: number; enabledUrls: string[] }> {
    return this.store.kysely.transaction().execute(async (trx) => {
      const enabledUrls = (
        await trx.deleteFrom('forwarding_disabled_urls').where('parking_id', '=', parkingId).returning('url').execute()
      ).map((row) => row.url);
      if (enabledUrls.length > 0)
        await trx
          .updateTable('forwarding_deliveries')
          .set({ next_attempt_at: nowMs })
          .where('state', '=', 'pending')
          .where('parking_id', '=', parkingId)
          // Those URLs' only: another URL's retries keep their schedule (and an attempt in flight its lease).
          .where('url', 'in', enabledUrls)
          .execute();
      const revived = await trx
        .updateTable('forwarding_deliveries')
        .set({ state: 'pending', attempts: 0, next_attempt_at: nowMs, oldest_record_at: nowMs })
        .where('state', '=', 'dead')
        .where('parking_id', '=', parkingId)
        .executeTakeFirst();
      return { revived: changed(revived), enabledUrls };
    });
  }

  /** A 410 Gone: nothing more is sent to this URL of this parking until revive. */
  async disable(parkingId: number, url: string, nowMs: number, reason: string): Promise<void> {
    await this.store.kysely
      .insertInto('forwarding_disabled_urls')
      .values({ parking_id: parkingId, url, disabled_at: nowMs, reason })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Queues again, as new rows (so new deliveries), the parking's box logs
   * received since `sinceMs`, for `url`; unverified ones only when
   * `unverifiedToo`. Returns how many. */
  async replay(
    parkingId: number,
    url: string,
    sinceMs: number,
    unverifiedToo: boolean,
    nowMs: number,
  ): Promise<number> {
    // No index of box logs by parking (migration 5): a replay is a rare
    // operator command, a scan of the table is its price.
    let logs = this.store.kysely
      .selectFrom('box_logs')
      .select([
        'id',
        'secured_parking_id',
        // Typed: PostgreSQL types a bare parameter of a select list as text.
        sql<string>`CAST(${url} AS TEXT)`.as('url'),
        sql<number>`CAST(${nowMs} AS BIGINT)`.as('created_at'),
      ])
      .where('secured_parking_id', '=', parkingId)
      .where('received_at', '>=', sinceMs)
      .orderBy('id');
    if (!unverifiedToo) logs = logs.where('verified', '=', 1);
    const result = await this.store.kysely
      .insertInto('forwarding_outbox')
      .columns(['box_log_id', 'parking_id', 'url', 'created_at'])
      .expression(logs)
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n);
  }

  /** When the next pending delivery is due (ms), or undefined. */
  async nextDue(): Promise<number | undefined> {
    const row = await this.store.kysely
      .selectFrom('forwarding_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('next'))
      .where('state', '=', 'pending')
      .where(enabled)
      .executeTakeFirst();
    return row?.next ?? undefined;
  }

  /** The secrets that sign a parking's deliveries, or undefined when the parking is gone. */
  async signingSecrets(parkingId: number): Promise<SigningSecrets | undefined> {
    return this.store.kysely
      .selectFrom('secured_parkings')
      .select(['forwarding_secret', 'forwarding_previous_secret', 'forwarding_previous_secret_until'])
      .where('id', '=', parkingId)
      .executeTakeFirst();
  }

  /** Per URL, of one parking or all of them. */
  async status(parkingId?: number): Promise<UrlStatus[]> {
    return statusQuery(this.store.kysely, parkingId).execute();
  }
}

/** The status query, one text for both engines and the synchronous path. */
function statusQuery(kysely: Kysely<Schema>, parkingId: number | undefined) {
  let query = kysely
    .selectFrom('forwarding_outbox as o')
    .leftJoin('forwarding_deliveries as d', 'd.id', 'o.delivery_id')
    .select((eb) => [
      'o.parking_id',
      'o.url',
      sql<number>`sum(CASE WHEN d.state IS NULL OR d.state = 'pending' THEN 1 ELSE 0 END)`.as('pending'),
      sql<number>`sum(CASE WHEN d.state = 'delivered' THEN 1 ELSE 0 END)`.as('delivered'),
      sql<number>`sum(CASE WHEN d.state = 'dead' THEN 1 ELSE 0 END)`.as('dead'),
      eb
        .selectFrom('forwarding_deliveries as x')
        .select('x.last_error')
        .whereRef('x.url', '=', 'o.url')
        .whereRef('x.parking_id', '=', 'o.parking_id')
        .where('x.last_attempt_at', 'is not', null)
        .orderBy('x.last_attempt_at', 'desc')
        .limit(1)
        .as('last_error'),
      eb
        .selectFrom('forwarding_deliveries as x')
        .select((inner) => inner.fn.max('x.last_attempt_at').as('last'))
        .whereRef('x.url', '=', 'o.url')
        .whereRef('x.parking_id', '=', 'o.parking_id')
        .as('last_attempt_at'),
      eb
        .selectFrom('forwarding_disabled_urls as x')
        .select('x.disabled_at')
        .whereRef('x.url', '=', 'o.url')
        .whereRef('x.parking_id', '=', 'o.parking_id')
        .as('disabled_at'),
    ])
    .groupBy(['o.parking_id', 'o.url'])
    .orderBy('o.parking_id')
    .orderBy('o.url');
  if (parkingId !== undefined) query = query.where('o.parking_id', '=', parkingId);
  return query.$castTo<UrlStatus>();
}
