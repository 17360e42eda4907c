// Box-log ingestion's reads and writes on PostgreSQL (ingest-store.ts): each
// a fixed SQL text run with new values (compiled once: Kysely's builder costs
// more than the query), set-based with array parameters (`= ANY($1)`,
// `unnest`), so a group of any size is one statement a table: one read of
// its users, keys, boxes and parkings, one insert of its box logs, one of its
// outbox rows, one update of its boxes' observations.
import { CompiledQuery, sql } from 'kysely';
import type { ParsedResponse } from '../../firmware-protocol/index.js';
import { ControlAnswers } from '../control/index.js';
import { CompiledOnce, greatest, type Executor, type PostgresStore } from '../db/store.js';
import { boxLogRow, type StoredBoxLog } from './repository.js';
import type { BoxObservation, BoxRow } from '../boxes/index.js';
import type { ParkingRow } from '../parkings/index.js';
import type { SessionRow } from '../sessions/index.js';
import type { SmartKeyRow } from '../smart-keys/index.js';
import type { IngestStore, OutboxEntry } from './ingest-store.js';

/** The ids of a group bound as ONE array parameter (`= ANY($n)`): the SQL text is the same whatever the group's size, so it is compiled once. */
const ids = sql<boolean>`${sql.ref('id')} = ANY(${sql.val<number[]>([])}::bigint[])`;

const SESSION_COLUMNS = [
  'id',
  'user_id',
  'parking_id',
  'state',
  'start_time',
  'end_time',
  'entrance_remaining_tries',
  'exit_remaining_tries',
  'amount_minor',
  'currency',
  'ended_at',
] as const;

/**
 * Ids are drawn in the order given (ord), as SQLite's one insert a row
 * gives them: that is how an unverified log finds its id among the rows
 * returned (a verified one is found by its key), and the logs of a batch
 * keep the order they came in. The rows then go in with verified logs in
 * (equipment_id, box_seq) order: the unique index over them is where two
 * groups meeting the same logs wait for each other, and in one order they
 * only wait, where in the orders they came in (one group's a then b,
 * another's b then a) they would deadlock.
 */
const INSERT_LOGS = `WITH l AS (
  SELECT *, nextval(pg_get_serial_sequence('box_logs', 'id')) AS id
  FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[],
    $9::text[], $10::text[], $11::integer[], $12::text[], $13::double precision[], $14::double precision[],
    $15::integer[], $16::bigint[], $17::integer[], $18::bigint[], $19::text[])
    WITH ORDINALITY AS l(source, fo_user_id, smart_key_id, equipment_id, secured_parking_id, type, command,
    command_decrypted, response, response_decrypted, offline, created_at, latitude, longitude, verified, box_seq,
    status, received_at, message_digest, ord)
  ORDER BY ord
)
INSERT INTO box_logs (id, source, fo_user_id, smart_key_id, equipment_id, secured_parking_id, type, command,
  command_decrypted, response, response_decrypted, offline, created_at, latitude, longitude, verified, box_seq, status, received_at,
  message_digest)
SELECT id, source, fo_user_id, smart_key_id, equipment_id, secured_parking_id, type, command,
  command_decrypted, response, response_decrypted, offline, created_at, latitude, longitude, verified, box_seq, status, received_at,
  message_digest
FROM l
ORDER BY CASE WHEN verified = 1 THEN equipment_id END, CASE WHEN verified = 1 THEN box_seq END, ord
ON CONFLICT DO NOTHING
RETURNING id, verified, equipment_id, box_seq, message_digest`;

/** The stored ids of verified logs a group met again. */
const VERIFIED_IDS = `SELECT b.id, b.equipment_id, b.box_seq
FROM box_logs b JOIN unnest($1::bigint[], $2::bigint[]) AS d(equipment_id, box_seq)
  ON b.equipment_id = d.equipment_id AND b.box_seq = d.box_seq
WHERE b.verified = 1`;

/** The stored ids of MQTT messages a group met again. */
const DIGEST_IDS = `SELECT id, message_digest FROM box_logs WHERE message_digest = ANY($1::text[])`;

const OBSERVATIONS = `UPDATE boxes b SET last_seen_at = o.seen_at, last_box_seq = o.box_seq, last_box_time = o.box_time,
  box_time_drift_seconds = coalesce(o.drift, b.box_time_drift_seconds), battery_mv = o.battery
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::integer[], $6::integer[])
  AS o(module_id, seen_at, box_seq, box_time, drift, battery)
WHERE b.module_id = o.module_id AND (b.last_box_seq IS NULL OR b.last_box_seq < o.box_seq)`;

const OUTBOX = `INSERT INTO forwarding_outbox (box_log_id, parking_id, url, created_at)
SELECT box_log_id, parking_id, url, $4 FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS o(box_log_id, parking_id, url)`;

const LOWER_TRIES = `UPDATE parking_sessions SET entrance_remaining_tries = LEAST(entrance_remaining_tries, $1),
  exit_remaining_tries = LEAST(exit_remaining_tries, $2) WHERE id = $3`;

const ACTIVATE = `UPDATE parking_sessions SET state = 'active' WHERE id = $1 AND state = 'entering'`;

const key = (equipmentId: number, boxSeq: number | null): string => `${equipmentId}/${String(boxSeq)}`;

export class PostgresIngestStore implements IngestStore {
  readonly #users: CompiledOnce<{ id: number }>;
  readonly #keys: CompiledOnce<SmartKeyRow>;
  readonly #boxes: CompiledOnce<BoxRow>;
  readonly #parkings: CompiledOnce<ParkingRow>;
  readonly #sessions: CompiledOnce<SessionRow>;
  readonly #answers: ControlAnswers;

  constructor(private readonly store: PostgresStore) {
    const { kysely } = store;
    this.#users = new CompiledOnce(kysely.selectFrom('users').select('id').where(ids));
    this.#keys = new CompiledOnce<SmartKeyRow>(
      kysely
        .selectFrom('smart_keys')
        .select([
          'id',
          'user_id',
          'parking_id',
          'session_id',
          'operator_id',
          'type',
          'description',
          'purpose',
          'access_command',
          'module_ids',
          'start_time',
          'end_time',
          'revoked_at',
        ])
        .where(ids),
    );
    this.#boxes = new CompiledOnce<BoxRow>(
      kysely
        .selectFrom('boxes')
        .selectAll()
        .where(sql<boolean>`module_id = ANY(${sql.val<number[]>([])}::bigint[])`),
    );
    this.#parkings = new CompiledOnce<ParkingRow>(kysely.selectFrom('secured_parkings').selectAll().where(ids));
    // In id order: two processes locking the same sessions take them in one order.
    this.#sessions = new CompiledOnce<SessionRow>(
      kysely.selectFrom('parking_sessions').select(SESSION_COLUMNS).where(ids).orderBy('id').forNoKeyUpdate(),
    );
    this.#answers = new ControlAnswers(store);
  }

  async users(on: Executor, wanted: readonly number[]): Promise<number[]> {
    return (await this.#users.run(on, [wanted])).map((row) => row.id);
  }

  smartKeys(on: Executor, wanted: readonly number[]): Promise<SmartKeyRow[]> {
    return this.#keys.run(on, [wanted]);
  }

  boxes(on: Executor, moduleIds: readonly number[]): Promise<BoxRow[]> {
    return this.#boxes.run(on, [moduleIds]);
  }

  parkings(on: Executor, wanted: readonly number[]): Promise<ParkingRow[]> {
    return this.#parkings.run(on, [wanted]);
  }

  sessionsForUpdate(on: Executor, wanted: readonly number[]): Promise<SessionRow[]> {
    return this.#sessions.run(on, [wanted]);
  }

  async insertLogs(on: Executor, logs: readonly StoredBoxLog[]): Promise<{ id: number; duplicate: boolean }[]> {
    if (logs.length === 0) return [];
    const rows = logs.map(boxLogRow);
    // One array a column: the INSERT unnests them.
    const columns = (rows[0] ?? []).map((_, column) => rows.map((row) => row[column]));
    const inserted = (
      await on.executeQuery<{
        id: number;
        verified: number;
        equipment_id: number;
        box_seq: number | null;
        message_digest: string | null;
      }>(CompiledQuery.raw(INSERT_LOGS, columns))
    ).rows;
    const verifiedIds = new Map<string, number>();
    const unverifiedIds: number[] = [];
    const digestIds = new Map<string, number>();
    for (const row of inserted) {
      if (row.verified === 1) verifiedIds.set(key(row.equipment_id, row.box_seq), row.id);
      else if (row.message_digest !== null) digestIds.set(row.message_digest, row.id);
      else unverifiedIds.push(row.id);
    }
    unverifiedIds.sort((a, b) => a - b);
    // Verified logs not inserted: stored before (by this group or another process).
    const again = logs.filter((log) => log.verified && !verifiedIds.has(key(log.entry.equipment_id, log.boxSeq)));
    const storedIds = new Map<string, number>();
    if (again.length > 0) {
      const rows = (
        await on.executeQuery<{ id: number; equipment_id: number; box_seq: number }>(
          CompiledQuery.raw(VERIFIED_IDS, [again.map((log) => log.entry.equipment_id), again.map((log) => log.boxSeq)]),
        )
      ).rows;
      for (const row of rows) storedIds.set(key(row.equipment_id, row.box_seq), row.id);
    }
    // MQTT messages not inserted: stored before (a redelivery).
    const storedDigests = new Map<string, number>();
    const digestsAgain = logs.flatMap((log) =>
      log.messageDigest !== null && !digestIds.has(log.messageDigest) ? [log.messageDigest] : [],
    );
    if (digestsAgain.length > 0)
      for (const row of (
        await on.executeQuery<{ id: number; message_digest: string }>(CompiledQuery.raw(DIGEST_IDS, [digestsAgain]))
      ).rows)
        storedDigests.set(row.message_digest, row.id);
    let nextUnverified = 0;
    return logs.map((log) => {
      if (log.messageDigest !== null) {
        const fresh = digestIds.get(log.messageDigest);
        if (fresh !== undefined) {
          digestIds.delete(log.messageDigest);
          storedDigests.set(log.messageDigest, fresh);
          return { id: fresh, duplicate: false };
        }
        const stored = storedDigests.get(log.messageDigest);
        if (stored === undefined) throw new Error(`box log of message ${log.messageDigest} ignored but not found`);
        return { id: stored, duplicate: true };
      }
      if (!log.verified) {
        const id = unverifiedIds[nextUnverified++];
        if (id === undefined) throw new Error('box log insert returned fewer rows than it was given');
        return { id, duplicate: false };
      }
      const k = key(log.entry.equipment_id, log.boxSeq);
      const fresh = verifiedIds.get(k);
      if (fresh !== undefined) {
        // The first of this group with that key is the stored one; a second is its duplicate.
        verifiedIds.delete(k);
        storedIds.set(k, fresh);
        return { id: fresh, duplicate: false };
      }
      const stored = storedIds.get(k);
      if (stored === undefined) throw new Error(`verified box log ${k} ignored but not found`);
      return { id: stored, duplicate: true };
    });
  }

  async lowerTries(on: Executor, sessionId: number, entrance: number, exit: number): Promise<void> {
    await on.executeQuery(CompiledQuery.raw(LOWER_TRIES, [entrance, exit, sessionId]));
  }

  async activate(on: Executor, sessionId: number): Promise<boolean> {
    const result = await on.executeQuery(CompiledQuery.raw(ACTIVATE, [sessionId]));
    return Number(result.numAffectedRows ?? 0n) === 1;
  }

  async noteObservations(on: Executor, observations: readonly BoxObservation[]): Promise<void> {
    if (observations.length === 0) return;
    // In module id order, as every process does.
    const sorted = [...observations].sort((a, b) => a.moduleId - b.moduleId);
    await on.executeQuery(
      CompiledQuery.raw(OBSERVATIONS, [
        sorted.map((o) => o.moduleId),
        sorted.map((o) => o.seenAt),
        sorted.map((o) => o.boxSeq),
        sorted.map((o) => o.boxTime),
        sorted.map((o) => o.driftSeconds),
        sorted.map((o) => o.batteryMv),
      ]),
    );
  }

  /** Built per call: a control answer is rare (not per log). */
  async noteControlSequence(on: Executor, moduleId: number, sequence: number, accepted: boolean): Promise<void> {
    const { dialect } = this.store;
    await on
      .updateTable('boxes')
      .set({
        next_control_seq: greatest<number>(dialect, sql.ref('next_control_seq'), sql.val(sequence + 1)),
        ...(accepted
          ? {
              last_control_seq: greatest<number>(dialect, sql`coalesce(last_control_seq, 0)`, sql.val(sequence)),
            }
          : {}),
      })
      .where('module_id', '=', moduleId)
      .execute();
  }

  settleControlAnswer(
    on: Executor,
    moduleId: number,
    response: ParsedResponse,
    commandNonce: Buffer,
    nowMs: number,
  ): Promise<void> {
    return this.#answers.settle(on, moduleId, response, commandNonce, nowMs);
  }

  async enqueueOutbox(on: Executor, entries: readonly OutboxEntry[], nowMs: number): Promise<void> {
    if (entries.length === 0) return;
    await on.executeQuery(
      CompiledQuery.raw(OUTBOX, [
        entries.map((entry) => entry.boxLogId),
        entries.map((entry) => entry.parkingId),
        entries.map((entry) => entry.url),
        nowMs,
      ]),
    );
  }
}
