// Smart keys (spec 2.6): the access command (ACCESS or ACCESS_SIGNED) is stored so every GET
// returns the same bytes.
//
// SmartKeyRepository on the store (SQLite or PostgreSQL, async): the
// session service, the driver's routes, the operator's operations.
import { sql, type Selectable } from 'kysely';
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

/** Tries to take a key id before giving up (each failure is an id some other
 * insert took first: a concurrent one, or a row written with its own id). */
const ID_TRIES = 20;

export class SmartKeyRepository {
  readonly #kysely;
  // Per request (the open route, a session's body): compiled once.
  readonly #byId;
  readonly #latestOfSession;
  // Per session created, inside its transaction: compiled once.
  readonly #insert;
  readonly #setCommand;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    this.#byId = new CompiledOnce(this.#kysely.selectFrom('smart_keys').selectAll().where('id', '=', 0));
    this.#latestOfSession = new CompiledOnce(
      this.#kysely.selectFrom('smart_keys').selectAll().where('session_id', '=', 0).orderBy('id', 'desc').limit(1),
    );
    // Its values bound in newKeyValues' order; the id is the engine's next id, no value.
    this.#insert = new CompiledOnce(
      this.#kysely
        .insertInto('smart_keys')
        .values({ id: nextKeyId(store.dialect), ...newKeyValues(PLACEHOLDER_KEY, 0) })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id'),
    );
    this.#setCommand = new CompiledOnce(
      this.#kysely
        .updateTable('smart_keys')
        .set({ access_command: Buffer.alloc(0), signed_by: '' })
        .where('id', '=', 0)
        .returningAll(),
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
   * it is known only now); call setCommand in the same transaction. Ids are
   * the service's 32-bit key ids. SQLite: the next after the largest (its
   * rowid rule), its one writer taking one at a time. PostgreSQL: the next
   * of the sequence smart_key_ids, or the next after the largest if a row
   * written with its own id went past it; concurrent creations take
   * distinct ids without waiting for each other's commits. An id taken
   * first by another insert makes this one try the next. */
  async insert(key: NewSmartKey, nowMs: number, on: Executor = this.#kysely): Promise<number> {
    const values = Object.values(newKeyValues(key, nowMs));
    for (let attempt = 0; attempt < ID_TRIES; attempt += 1) {
      const [row] = await this.#insert.run(on, values);
      if (row !== undefined) return row.id;
    }
    throw new Error(`no smart key id after ${ID_TRIES} tries`);
  }

  /** Sets a key's command; returns the key as stored.
   * `signedBy`: the issuer public key (hex) that signed an ACCESS_SIGNED; null for a sealed ACCESS. */
  async setCommand(
    id: number,
    command: Buffer,
    signedBy: string | null,
    on: Executor = this.#kysely,
  ): Promise<SmartKeyRow> {
    const [row] = await this.#setCommand.run(on, [command, signedBy, id]);
    if (row === undefined) throw new Error(`no smart key ${id} to set its command`);
    return row;
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

/** The id of a new key (see insert). */
function nextKeyId(dialect: Dialect) {
  const afterLargest = sql<number>`(SELECT coalesce(max(id), 0) + 1 FROM smart_keys)`;
  return dialect === 'postgres' ? sql<number>`greatest(nextval('smart_key_ids'), ${afterLargest})` : afterLargest;
}

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

/** A key's row whole, its id chosen and its command made already: what a
 * statement that inserts the key itself binds (a session's creation on
 * PostgreSQL, api/sessions/creation-postgres.ts), in the order of
 * KEY_ROW_COLUMNS. */
export function keyRowValues(id: number, key: NewSmartKey, command: Buffer, signedBy: string | null, nowMs: number) {
  return { id, ...newKeyValues(key, nowMs), access_command: command, signed_by: signedBy };
}

/** The columns keyRowValues gives, in its order. */
export const KEY_ROW_COLUMNS: readonly string[] = Object.keys(
  keyRowValues(0, PLACEHOLDER_KEY, Buffer.alloc(0), null, 0),
);

function keyType(purpose: KeyPurpose): string {
  return purpose === 'operator' ? 'operator_access' : 'session_access';
}
