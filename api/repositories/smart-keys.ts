// Smart keys (spec 2.6): the access command (ACCESS or ACCESS_SIGNED) is stored so every GET
// returns the same bytes.
//
// SmartKeyRepository on the store (SQLite or PostgreSQL, async): the
// session service, the driver's routes, the operator's operations.
import { CompiledQuery, sql, type Selectable } from 'kysely';
import type { Schema } from '../db/schema.js';
import { changed, CompiledOnce, type Dialect, type Executor, type Store } from '../db/store.js';

/** `operator`: a one-off ACCESS an operator sent (api/operators/operator-access.ts): no driver, no session. */
export type SmartKeyRow = Selectable<Schema['smart_keys']>;
export type KeyPurpose = SmartKeyRow['purpose'];

export interface NewSmartKey {
  /** Null for an operator's key (and then operatorId is set). */
  userId: number | null;
  parkingId: number;
  sessionId: number | null;
  operatorId?: number;
  description: string;
  purpose: KeyPurpose;
  moduleIds: readonly number[];
  startTime: number;
  endTime: number;
}

/** Tries to take the next key id before giving up (each failure is a concurrent insert that took it). */
const ID_TRIES = 20;

/** The first key of pg_advisory_xact_lock(int, int) for the next key id ("pksk"). */
const KEY_ID_LOCK_CLASS = 0x706b736b;

/** PostgreSQL: waits until no other transaction is taking a key id, and
 * holds the lock until this one ends. */
const LOCK_KEY_IDS = CompiledQuery.raw('SELECT pg_advisory_xact_lock($1, 0)', [KEY_ID_LOCK_CLASS]);

export class SmartKeyRepository {
  readonly #kysely;
  readonly #dialect: Dialect;
  // Per request (the open route, a session's body): compiled once.
  readonly #byId;
  readonly #latestOfSession;
  // Per session created, inside its transaction: compiled once.
  readonly #insert;
  readonly #setCommand;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    this.#dialect = store.dialect;
    this.#byId = new CompiledOnce(this.#kysely.selectFrom('smart_keys').selectAll().where('id', '=', 0));
    this.#latestOfSession = new CompiledOnce(
      this.#kysely.selectFrom('smart_keys').selectAll().where('session_id', '=', 0).orderBy('id', 'desc').limit(1),
    );
    // Its values bound in newKeyValues' order; the id is the subquery, no value.
    this.#insert = new CompiledOnce(
      this.#kysely
        .insertInto('smart_keys')
        .values({ id: NEXT_KEY_ID, ...newKeyValues(PLACEHOLDER_KEY, 0) })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id'),
    );
    this.#setCommand = new CompiledOnce(
      this.#kysely
        .updateTable('smart_keys')
        .set({ access_command: Buffer.alloc(0), signed_by: '' })
        .where('id', '=', 0),
    );
  }

  async findById(id: number, on: Executor = this.#kysely): Promise<SmartKeyRow | undefined> {
    return (await this.#byId.run(on, [id]))[0];
  }

  async listOfUser(userId: number): Promise<SmartKeyRow[]> {
    return this.#kysely.selectFrom('smart_keys').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  }

  async latestOf(sessionId: number, on: Executor = this.#kysely): Promise<SmartKeyRow | undefined> {
    return (await this.#latestOfSession.run(on, [sessionId, 1]))[0];
  }

  /** Inserts a key without its command (the command seals the key's id, so
   * it is known only now); call setCommand in the same transaction. The id
   * is the next after the largest (SQLite's rowid rule, kept on PostgreSQL,
   * where the column has no identity: ids are the service's 32-bit key ids);
   * a concurrent insert that took it first makes this one try the next.
   * On PostgreSQL the largest is read in a snapshot that misses the keys
   * of transactions not yet committed, and a conflict with one of them
   * waits for its end: concurrent creations would queue on each other's
   * ids and give up after ID_TRIES (bench:api's sessions, 50 at once, saw
   * 500s). So a transaction-scoped advisory lock makes one transaction at a
   * time take a key id, until its commit; SQLite's one writer does the same. */
  async insert(key: NewSmartKey, nowMs: number, on: Executor = this.#kysely): Promise<number> {
    const values = Object.values(newKeyValues(key, nowMs));
    if (this.#dialect === 'postgres') await on.executeQuery(LOCK_KEY_IDS);
    for (let attempt = 0; attempt < ID_TRIES; attempt += 1) {
      const [row] = await this.#insert.run(on, values);
      if (row !== undefined) return row.id;
    }
    throw new Error(`no smart key id after ${ID_TRIES} tries`);
  }

  /** `signedBy`: the issuer public key (hex) that signed an ACCESS_SIGNED; null for a sealed ACCESS. */
  async setCommand(id: number, command: Buffer, signedBy: string | null, on: Executor = this.#kysely): Promise<void> {
    await this.#setCommand.run(on, [command, signedBy, id]);
  }

  /** Marks a key revoked at `nowMs`; false when it already was. */
  async revoke(id: number, nowMs: number, on: Executor = this.#kysely): Promise<boolean> {
    const result = await on
      .updateTable('smart_keys')
      .set({ revoked_at: nowMs })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return changed(result) === 1;
  }
}

/** The next id after the largest (see insert). */
const NEXT_KEY_ID = sql<number>`(SELECT coalesce(max(id), 0) + 1 FROM smart_keys)`;

const PLACEHOLDER_KEY: NewSmartKey = {
  userId: 0,
  parkingId: 0,
  sessionId: 0,
  description: '',
  purpose: 'session',
  moduleIds: [],
  startTime: 0,
  endTime: 0,
};

/** The columns of a new key but its id, in the order its compiled insert binds them. */
function newKeyValues(key: NewSmartKey, nowMs: number) {
  return {
    user_id: key.userId,
    parking_id: key.parkingId,
    session_id: key.sessionId,
    operator_id: key.operatorId ?? null,
    type: keyType(key.purpose),
    description: key.description,
    purpose: key.purpose,
    access_command: Buffer.alloc(0),
    module_ids: JSON.stringify(key.moduleIds),
    start_time: key.startTime,
    end_time: key.endTime,
    created_at: nowMs,
  };
}

function keyType(purpose: KeyPurpose): string {
  return purpose === 'operator' ? 'operator_access' : 'session_access';
}
