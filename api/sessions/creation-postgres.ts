// A session's creation on PostgreSQL (creation.ts) in two statements. Each
// statement is a round trip whose socket write costs the API more than the
// statement itself (docs/benchmarks.md), so:
//
// - READ: the parking and its boxes (as JSON), the driver's open session
//   and creation bucket; and, only when the creation goes ahead (an active
//   parking with boxes, no open session, a token in the bucket), the ids
//   its rows will take: the session's from its identity sequence, the smart
//   key's as SmartKeyRepository.insert takes it. A refused creation takes
//   no id, so refusals cannot use up the 32-bit key ids.
// - WRITE: the key's command sealed (or signed) over its id in JS, then one
//   statement of data-modifying CTEs, atomic without BEGIN and COMMIT: the
//   driver's token (the limiter's own upsert); the session only if the
//   token was taken, and only if the partial unique index
//   parking_sessions_one_open lets it in (ON CONFLICT DO NOTHING: a
//   concurrent creation of the driver got there first); its key and its
//   payment only if the session went in. Every row comes back from it, as
//   JSON: the pg driver's cost grows with a result's columns.
//
// Both are named prepared statements: each pooled connection prepares them
// once, so PostgreSQL plans them once rather than at every creation, and
// the API sends their text once. Their results' columns do not depend on
// the tables' (the rows come as JSON), so a migration that adds a column
// leaves them valid.
//
// What SQLite's path does in its transaction holds here in the statement:
// a token taken by a creation whose session the index refused stays taken,
// as there; nothing else of it is written. A token the read saw but the
// upsert did not find (the driver's concurrent creations took it) is the
// limit's refusal, its wait read again, as SQLite's take reads it. Ids
// taken but not written (a refusal after the read, a lost race) are gaps
// in the sequences, never rows.
import type { Clock } from '../../lib/clock.js';
import type { PostgresStore } from '../db/store.js';
import { retryingLostRaces } from '../db/lost-race.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import type { BoxRow } from '../boxes/index.js';
import type { ParkingRow } from '../parkings/index.js';
import { NEW_PAYMENT_COLUMNS, newPaymentValues, type PaymentProvider, type PaymentRow } from '../payments/index.js';
import { KEY_ROW_COLUMNS, sealedKeyRow, type SmartKeyRow } from '../smart-keys/index.js';
import type { SessionCreateLimiter } from './create-limit.js';
import {
  type CreationReads,
  keyRequestOf,
  paymentRequestOf,
  planCreation,
  type PreparedCreation,
  type SessionCreation,
  type WrittenSession,
} from './creation.js';
import { SessionCreateLimited } from './errors.js';
import { NEW_SESSION_COLUMNS, newSessionValues, type SessionRow } from './repository.js';

export interface PostgresCreationDeps {
  clock: Clock;
  sessionCreateLimiter: Pick<
    SessionCreateLimiter,
    'limits' | 'waitOf' | 'waitAfterRefusal' | 'latestFullAt' | 'takeSql' | 'takeValues'
  >;
  paymentProvider: Pick<PaymentProvider, 'preparePayment'>;
}

/** The ids of a session's rows, taken before they are written. */
interface CreationIds {
  sessionId: number;
  keyId: number;
}

/** The next of the session ids; the next smart key id as SmartKeyRepository.insert takes it. */
const SESSION_ID = `nextval(pg_get_serial_sequence('parking_sessions', 'id'))`;
const KEY_ID = `greatest(nextval('smart_key_ids'), (SELECT coalesce(max(id), 0) + 1 FROM smart_keys))`;

/** $1 the parking, $2 the driver, $3 the largest full_at with a token at hand
 * (SessionCreateLimiter.latestFullAt). The parking and its boxes come as
 * JSON: each of their columns is a number, a string or null, so JSON loses
 * nothing, and a few columns cost the driver less to parse than all of theirs. */
const READ = `SELECT row_to_json(p) AS parking, b.boxes, o.id AS open_id, o.state AS open_state, l.full_at,
  CASE WHEN g.goes THEN ${SESSION_ID} END AS session_id,
  CASE WHEN g.goes THEN ${KEY_ID} END AS key_id
FROM secured_parkings p
CROSS JOIN LATERAL (
  SELECT coalesce(json_agg(x ORDER BY x.module_id), '[]') AS boxes, count(*) AS n FROM boxes x WHERE x.parking_id = p.id
) b
LEFT JOIN LATERAL (SELECT id, state FROM parking_sessions WHERE user_id = $2 AND state <> 'finished') o ON true
LEFT JOIN session_create_limits l ON l.user_id = $2
CROSS JOIN LATERAL (SELECT p.is_active = 1 AND b.n > 0 AND o.id IS NULL AND coalesce(l.full_at, 0) <= $3 AS goes) g
WHERE p.id = $1`;

// Types, not interfaces: pg's rows are records of their columns.
type ReadRow = {
  parking: ParkingRow;
  boxes: BoxRow[];
  open_id: number | null;
  open_state: SessionRow['state'] | null;
  full_at: number | null;
  session_id: number | null;
  key_id: number | null;
};

const FRESH_IDS = `SELECT ${SESSION_ID} AS session_id, ${KEY_ID} AS key_id`;

/** The write's statement: the limiter's take (its values first), then the
 * session's, the key's and the payment's values, each in its columns' order. */
function writeStatement(takeSql: string, takeValues: number): string {
  let next = takeValues;
  const values = (columns: readonly string[]) => columns.map(() => `$${String(++next)}`).join(', ');
  return `WITH taken AS (${takeSql}),
created_session AS (
  INSERT INTO parking_sessions (id, ${NEW_SESSION_COLUMNS.join(', ')})
  SELECT ${values(['id', ...NEW_SESSION_COLUMNS])} FROM taken
  ON CONFLICT (user_id) WHERE state <> 'finished' DO NOTHING
  RETURNING *
),
created_key AS (
  INSERT INTO smart_keys (${KEY_ROW_COLUMNS.join(', ')})
  SELECT ${values(KEY_ROW_COLUMNS)} FROM created_session
  RETURNING *
),
created_payment AS (
  INSERT INTO payments (${NEW_PAYMENT_COLUMNS.join(', ')})
  SELECT ${values(NEW_PAYMENT_COLUMNS)} FROM created_session
  RETURNING *
)
SELECT (SELECT count(*) FROM taken)::integer AS taken, row_to_json(s) AS session, row_to_json(p) AS payment,
  row_to_json(k) AS key, k.access_command AS key_command
FROM (SELECT 1) AS one
LEFT JOIN created_session s ON true
LEFT JOIN created_key k ON true
LEFT JOIN created_payment p ON true`;
}

/** The rows as JSON (numbers, strings and nulls); the key's command also as
 * bytes, in place of its text in the key's JSON. */
type WriteRow = {
  taken: number;
  session: SessionRow | null;
  payment: PaymentRow | null;
  key: Omit<SmartKeyRow, 'access_command'> | null;
  key_command: Buffer | null;
};

/** Writes with fresh ids after another row took one of them, at most this many times. */
const ID_TRIES = 20;

/** The unique violation of a row that took one of the ids first (a smart
 * key, or a session, stored with its own id past the sequence). */
function idTaken(error: unknown): boolean {
  const constraint = (error as { constraint?: unknown } | null)?.constraint;
  return isUniqueViolation(error) && (constraint === 'smart_keys_pkey' || constraint === 'parking_sessions_pkey');
}

/** What the writes of every creation share, made once. */
interface Writer {
  store: Pick<PostgresStore, 'kysely' | 'pool'>;
  deps: PostgresCreationDeps;
  /** writeStatement's text. */
  sql: string;
}

export class PostgresSessionCreation implements SessionCreation {
  readonly #writer: Writer;

  constructor(store: Pick<PostgresStore, 'kysely' | 'pool'>, deps: PostgresCreationDeps) {
    const limiter = deps.sessionCreateLimiter;
    this.#writer = { store, deps, sql: writeStatement(limiter.takeSql, limiter.takeValues(0, 0).length) };
  }

  async prepare(parkingId: number, userId: number): Promise<PreparedCreation | undefined> {
    const { store, deps } = this.#writer;
    const now = deps.clock.now();
    const values = [parkingId, userId, deps.sessionCreateLimiter.latestFullAt(now)];
    const [row] = (await store.pool.query<ReadRow>({ name: 'session_creation_read', text: READ, values })).rows;
    return row && new PostgresPreparedCreation(this.#writer, userId, now, row);
  }
}

/** A class, not an object with a closure: see CreationPlan (creation.ts). */
class PostgresPreparedCreation implements PreparedCreation {
  readonly parking: ParkingRow;
  readonly boxes: BoxRow[];
  readonly openSession: CreationReads['openSession'];

  constructor(
    private readonly writer: Writer,
    private readonly userId: number,
    /** The read's time, which the write keeps: the token the read saw is the one the write takes. */
    private readonly now: number,
    private readonly read: ReadRow,
  ) {
    this.parking = read.parking;
    this.boxes = read.boxes;
    const { open_id: openId, open_state: openState } = read;
    this.openSession = openId !== null && openState !== null ? { id: openId, state: openState } : undefined;
  }

  async write(): Promise<WrittenSession | undefined> {
    const limiter = this.writer.deps.sessionCreateLimiter;
    const { full_at: fullAt, session_id: sessionId, key_id: keyId } = this.read;
    const wait = limiter.waitOf(fullAt ?? undefined, this.now);
    if (wait > 0) throw new SessionCreateLimited(wait, limiter.limits);
    if (sessionId === null || keyId === null)
      throw new Error(`the read of a creation at parking ${this.parking.id} took no ids`);
    let ids: CreationIds = { sessionId, keyId };
    for (let attempt = 1; ; attempt++) {
      try {
        return await retryingLostRaces(() => this.#writeOnce(ids));
      } catch (error) {
        if (!idTaken(error) || attempt >= ID_TRIES) throw error;
        ids = await this.#freshIds();
      }
    }
  }

  async #writeOnce({ sessionId, keyId }: CreationIds): Promise<WrittenSession | undefined> {
    const { store, deps, sql } = this.writer;
    const { userId, now } = this;
    const limiter = deps.sessionCreateLimiter;
    const plan = planCreation(userId, this.parking, this.boxes, now);
    const newPayment = deps.paymentProvider.preparePayment(paymentRequestOf(plan, sessionId));
    const values = [
      ...limiter.takeValues(userId, now),
      sessionId,
      ...Object.values(newSessionValues(plan.session, now)),
      ...Object.values(sealedKeyRow(keyRequestOf(plan, sessionId), keyId, now)),
      ...Object.values(newPaymentValues(newPayment, now)),
    ];
    const [row] = (await store.pool.query<WriteRow>({ name: 'session_creation_write', text: sql, values })).rows;
    if (row === undefined) throw new Error('a creation wrote without answering');
    if (row.taken === 0)
      throw new SessionCreateLimited(await limiter.waitAfterRefusal(store.kysely, userId, now), limiter.limits);
    const { session, key, key_command: command, payment } = row;
    if (session === null) return undefined;
    if (key === null || command === null || payment === null)
      throw new Error(`session ${session.id} was written without its key or payment`);
    return { session, key: { ...key, access_command: command }, payment };
  }

  async #freshIds(): Promise<CreationIds> {
    const [row] = (await this.writer.store.pool.query<{ session_id: number; key_id: number }>(FRESH_IDS)).rows;
    if (row === undefined) throw new Error('no ids for a creation');
    return { sessionId: row.session_id, keyId: row.key_id };
  }
}
