// Access + refresh token pairs, stored only as SHA-256 hashes.
import type { Selectable } from 'kysely';
import type { TokensTable } from '../db/schema.js';
import { CompiledOnce, changed, type Executor, type Store } from '../db/store.js';
import type { PublicUser } from './users-repository.js';

export interface NewTokenPair {
  userId: number;
  clientAppRowId: number;
  accessHash: Buffer;
  refreshHash: Buffer;
  accessExpiresAt: number;
  refreshExpiresAt: number;
}

/** A bearer lookup: the user with the state of the token; pair_id is the
 * token pair's id (the user's is `id`). */
export type BearerRow = PublicUser &
  Pick<Selectable<TokensTable>, 'access_expires_at' | 'revoked_at'> & { pair_id: Selectable<TokensTable>['id'] };

const PAIR_COLUMNS = [
  'id',
  'user_id',
  'client_app_id',
  'access_expires_at',
  'refresh_expires_at',
  'revoked_at',
  'family_id',
] as const;

/** A pair as committed: family_id is set in the transaction that inserts it. */
export type TokenPairRow = Omit<Pick<Selectable<TokensTable>, (typeof PAIR_COLUMNS)[number]>, 'family_id'> & {
  family_id: NonNullable<TokensTable['family_id']>;
};

export class TokenRepository {
  private readonly bearer: CompiledOnce<BearerRow>;
  private readonly pairEndedListeners: ((pairId: number) => void)[] = [];

  constructor(private readonly store: Store) {
    // The one query of every authenticated request on a cache miss: an index
    // lookup by hash, compiled once (Kysely's builder costs more than the
    // lookup), its columns named as BearerRow's so that the row is the
    // result as it comes, with no object built per call.
    this.bearer = new CompiledOnce(
      store.kysely
        .selectFrom('tokens as t')
        .innerJoin('users as u', 'u.id', 't.user_id')
        .select([
          'u.id',
          'u.email',
          'u.first_name',
          'u.last_name',
          'u.phone',
          't.id as pair_id',
          't.access_expires_at',
          't.revoked_at',
        ])
        .where('t.access_token_hash', '=', Buffer.alloc(0)),
    );
  }

  /** Stores a login's first pair, the first of a new family (its own id). */
  insert(pair: NewTokenPair, nowMs: number): Promise<number> {
    return this.store.kysely.transaction().execute(async (trx) => {
      const id = await insertInFamily(trx, pair, nowMs, null);
      await trx.updateTable('tokens').set({ family_id: id }).where('id', '=', id).execute();
      return id;
    });
  }

  async findByRefreshHash(hash: Buffer): Promise<TokenPairRow | undefined> {
    return familyOf(
      await this.store.kysely
        .selectFrom('tokens')
        .select(PAIR_COLUMNS)
        .where('refresh_token_hash', '=', hash)
        .executeTakeFirst(),
    );
  }

  async findByAccessHash(hash: Buffer): Promise<TokenPairRow | undefined> {
    return familyOf(
      await this.store.kysely
        .selectFrom('tokens')
        .select(PAIR_COLUMNS)
        .where('access_token_hash', '=', hash)
        .executeTakeFirst(),
    );
  }

  async findBearer(accessHash: Buffer): Promise<BearerRow | undefined> {
    return (await this.bearer.run(this.store.kysely, [accessHash]))[0];
  }

  /** Called with the id of every pair this repository ends (revocation,
   * rotation): the bearer cache evicts it. */
  onPairEnded(listener: (pairId: number) => void): void {
    this.pairEndedListeners.push(listener);
  }

  /** Revokes a pair; false when it was already revoked. */
  async revoke(id: number, nowMs: number): Promise<boolean> {
    const ended = (await revokeOne(this.store.kysely, id, nowMs)) === 1;
    // Evicted even when it was already revoked (by another process, say).
    this.pairEnded(id);
    return ended;
  }

  /** Revokes every pair of a family (all of them: a pair of a family is
   * either its live newest or already ended) and evicts each from the bearer
   * cache, those another process revoked too. Returns how many it ended. */
  async revokeFamily(familyId: number, nowMs: number): Promise<number> {
    const ended = changed(
      await this.store.kysely
        .updateTable('tokens')
        .set({ revoked_at: nowMs })
        .where('family_id', '=', familyId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst(),
    );
    const ids = await this.store.kysely.selectFrom('tokens').select('id').where('family_id', '=', familyId).execute();
    for (const { id } of ids) this.pairEnded(id);
    return ended;
  }

  /** Rotation: revokes the old pair and stores the new one, of the same
   * family, atomically; returns false (and stores nothing) when the old pair
   * was revoked meanwhile, so a refresh token can be used once even by two
   * concurrent requests, in one process or several. The revocation is the
   * conditional UPDATE (revoked_at IS NULL): on PostgreSQL a second rotation
   * of the pair waits on the first's row lock, then finds it revoked and
   * changes nothing; on SQLite the write transaction (BEGIN IMMEDIATE)
   * serializes them. */
  async rotate(old: Pick<TokenPairRow, 'id' | 'family_id'>, pair: NewTokenPair, nowMs: number): Promise<boolean> {
    const rotated = await this.store.kysely.transaction().execute(async (trx) => {
      if ((await revokeOne(trx, old.id, nowMs)) !== 1) return false;
      await insertInFamily(trx, pair, nowMs, old.family_id);
      return true;
    });
    this.pairEnded(old.id);
    return rotated;
  }

  private pairEnded(id: number): void {
    for (const listener of this.pairEndedListeners) listener(id);
  }
}

async function insertInFamily(
  executor: Executor,
  pair: NewTokenPair,
  nowMs: number,
  familyId: number | null,
): Promise<number> {
  const row = await executor
    .insertInto('tokens')
    .values({
      user_id: pair.userId,
      client_app_id: pair.clientAppRowId,
      access_token_hash: pair.accessHash,
      refresh_token_hash: pair.refreshHash,
      access_expires_at: pair.accessExpiresAt,
      refresh_expires_at: pair.refreshExpiresAt,
      created_at: nowMs,
      family_id: familyId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function revokeOne(executor: Executor, id: number, nowMs: number): Promise<number> {
  return changed(
    await executor
      .updateTable('tokens')
      .set({ revoked_at: nowMs })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst(),
  );
}

/** family_id is set in the transaction that inserts a pair: never null once committed. */
function familyOf(
  row: (Omit<TokenPairRow, 'family_id'> & { family_id: number | null }) | undefined,
): TokenPairRow | undefined {
  if (row === undefined) return undefined;
  if (row.family_id === null) throw new Error(`token pair ${row.id} has no family`);
  return row as TokenPairRow;
}
