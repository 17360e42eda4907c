// Operator accounts (schema version 11): a name and the SHA-256 of the bearer token.
import type { Selectable } from 'kysely';
import type { OperatorsTable } from '../db/schema.js';
import { CompiledOnce, changed, type Store } from '../db/store.js';
import { isUniqueViolation } from '../db/unique-violation.js';

const COLUMNS = ['id', 'name', 'token_hash', 'created_at'] as const;

export type OperatorRow = Pick<Selectable<OperatorsTable>, (typeof COLUMNS)[number]>;

export class OperatorRepository {
  private readonly byHash: CompiledOnce<OperatorRow>;

  constructor(private readonly store: Store) {
    // Every request of the operator API: compiled once.
    this.byHash = new CompiledOnce(
      store.kysely.selectFrom('operators').select(COLUMNS).where('token_hash', '=', Buffer.alloc(0)),
    );
  }

  /** The operator whose token has this SHA-256 (one indexed read: the UNIQUE index). */
  async findByTokenHash(hash: Buffer): Promise<OperatorRow | undefined> {
    return (await this.byHash.run(this.store.kysely, [hash]))[0];
  }

  /** The token hash of each of these operators still there: what the event
   * stream checks its clients against (one read through the primary key). */
  async tokenHashesOf(operatorIds: readonly number[]): Promise<Map<number, Buffer>> {
    if (operatorIds.length === 0) return new Map();
    const rows = await this.store.kysely
      .selectFrom('operators')
      .select(['id', 'token_hash'])
      .where('id', 'in', operatorIds)
      .execute();
    return new Map(rows.map((row) => [row.id, row.token_hash]));
  }

  findByName(name: string): Promise<OperatorRow | undefined> {
    return this.store.kysely.selectFrom('operators').select(COLUMNS).where('name', '=', name).executeTakeFirst();
  }

  list(): Promise<OperatorRow[]> {
    return this.store.kysely.selectFrom('operators').select(COLUMNS).orderBy('name').execute();
  }

  /** The new operator's id; undefined when the name is taken (the unique
   * constraint, on either engine: two concurrent adds cannot both win). */
  async insert(name: string, tokenHash: Buffer, nowMs: number): Promise<number | undefined> {
    try {
      const row = await this.store.kysely
        .insertInto('operators')
        .values({ name, token_hash: tokenHash, created_at: nowMs })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  /** Creates the operator or replaces its token, in one statement (an upsert:
   * two processes ensuring the same operator at once both succeed). */
  async upsert(name: string, tokenHash: Buffer, nowMs: number): Promise<void> {
    await this.store.kysely
      .insertInto('operators')
      .values({ name, token_hash: tokenHash, created_at: nowMs })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ token_hash: eb.ref('excluded.token_hash') })))
      .execute();
  }

  /** True when an operator of that name was removed. */
  async remove(name: string): Promise<boolean> {
    return changed(await this.store.kysely.deleteFrom('operators').where('name', '=', name).executeTakeFirst()) === 1;
  }
}
