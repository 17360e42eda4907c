// Access + refresh token pairs, stored only as SHA-256 hashes.
import type { Db } from '../db/open.js';
import type { PublicUser } from './users.js';

export interface TokenPairRow {
  id: number;
  user_id: number;
  client_app_id: number;
  access_expires_at: number;
  refresh_expires_at: number;
  revoked_at: number | null;
  /** The id of the family's first pair (the login); rotation keeps it. */
  family_id: number;
}

export interface NewTokenPair {
  userId: number;
  clientAppRowId: number;
  accessHash: Buffer;
  refreshHash: Buffer;
  accessExpiresAt: number;
  refreshExpiresAt: number;
}

/** A bearer lookup: the user with the state of the token. */
export interface BearerRow extends PublicUser {
  /** The token pair's id (the user's is `id`). */
  pair_id: number;
  access_expires_at: number;
  revoked_at: number | null;
}

type BearerTuple = [number, string, string, string, string, number, number, number | null];

export class TokenRepository {
  private readonly insertRow;
  private readonly byRefresh;
  private readonly byAccess;
  private readonly revokeRow;
  private readonly setOwnFamily;
  private readonly familyIds;
  private readonly revokeFamilyRows;
  private readonly bearer;
  private readonly pairEndedListeners: ((pairId: number) => void)[] = [];

  constructor(private readonly db: Db) {
    this.insertRow = db.prepare<[number, number, Buffer, Buffer, number, number, number, number | null]>(
      `INSERT INTO tokens (user_id, client_app_id, access_token_hash, refresh_token_hash, access_expires_at, refresh_expires_at, created_at, family_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.setOwnFamily = db.prepare<[number]>('UPDATE tokens SET family_id = id WHERE id = ?');
    this.familyIds = db.prepare<[number], number>('SELECT id FROM tokens WHERE family_id = ?').pluck(true);
    this.revokeFamilyRows = db.prepare<[number, number]>(
      'UPDATE tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL',
    );
    const columns = 'id, user_id, client_app_id, access_expires_at, refresh_expires_at, revoked_at, family_id';
    this.byRefresh = db.prepare<[Buffer], TokenPairRow>(`SELECT ${columns} FROM tokens WHERE refresh_token_hash = ?`);
    this.byAccess = db.prepare<[Buffer], TokenPairRow>(`SELECT ${columns} FROM tokens WHERE access_token_hash = ?`);
    this.revokeRow = db.prepare<[number, number]>(
      'UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    );
    // The one query of every authenticated request: an index lookup by hash.
    // Rows come back as arrays (raw): building keyed objects costs better-sqlite3
    // more than the lookup itself.
    this.bearer = db
      .prepare<[Buffer], BearerTuple>(
        `SELECT u.id, u.email, u.first_name, u.last_name, u.phone, t.id, t.access_expires_at, t.revoked_at
         FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.access_token_hash = ?`,
      )
      .raw(true);
  }

  /** Stores a login's first pair, the first of a new family. */
  insert(pair: NewTokenPair, nowMs: number): number {
    return this.db.transaction(() => {
      const id = this.insertInFamily(pair, nowMs, null);
      this.setOwnFamily.run(id);
      return id;
    })();
  }

  private insertInFamily(pair: NewTokenPair, nowMs: number, familyId: number | null): number {
    return Number(
      this.insertRow.run(
        pair.userId,
        pair.clientAppRowId,
        pair.accessHash,
        pair.refreshHash,
        pair.accessExpiresAt,
        pair.refreshExpiresAt,
        nowMs,
        familyId,
      ).lastInsertRowid,
    );
  }

  findByRefreshHash(hash: Buffer): TokenPairRow | undefined {
    return this.byRefresh.get(hash);
  }

  findByAccessHash(hash: Buffer): TokenPairRow | undefined {
    return this.byAccess.get(hash);
  }

  findBearer(accessHash: Buffer): BearerRow | undefined {
    const row = this.bearer.get(accessHash);
    if (row === undefined) return undefined;
    const [id, email, first_name, last_name, phone, pair_id, access_expires_at, revoked_at] = row;
    return { id, email, first_name, last_name, phone, pair_id, access_expires_at, revoked_at };
  }

  /** Called with the id of every pair this repository ends (revocation,
   * rotation): the bearer cache evicts it. */
  onPairEnded(listener: (pairId: number) => void): void {
    this.pairEndedListeners.push(listener);
  }

  /** Revokes a pair; false when it was already revoked. */
  revoke(id: number, nowMs: number): boolean {
    const ended = this.revokeRow.run(nowMs, id).changes === 1;
    // Evicted even when it was already revoked (by another process, say).
    for (const listener of this.pairEndedListeners) listener(id);
    return ended;
  }

  /** Revokes every pair of a family (all of them: a pair of a family is
   * either its live newest or already ended) and evicts each from the bearer
   * cache, those another process revoked too. Returns how many it ended. */
  revokeFamily(familyId: number, nowMs: number): number {
    const ended = this.revokeFamilyRows.run(nowMs, familyId).changes;
    for (const id of this.familyIds.all(familyId)) {
      for (const listener of this.pairEndedListeners) listener(id);
    }
    return ended;
  }

  /** Rotation: revokes the old pair and stores the new one, of the same
   * family, atomically; returns false (and stores nothing) when the old pair
   * was revoked meanwhile, so a refresh token can be used once even by two
   * concurrent requests. */
  rotate(old: Pick<TokenPairRow, 'id' | 'family_id'>, pair: NewTokenPair, nowMs: number): boolean {
    return this.db.transaction(() => {
      if (!this.revoke(old.id, nowMs)) return false;
      this.insertInFamily(pair, nowMs, old.family_id);
      return true;
    })();
  }
}
