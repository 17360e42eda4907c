// Operator accounts (migration 11): a name and the SHA-256 of the bearer token.
import type { Db } from '../db/open.js';

export interface OperatorRow {
  id: number;
  name: string;
  token_hash: Buffer;
  created_at: number;
}

export class OperatorRepository {
  private readonly byHash;
  private readonly byName;
  private readonly everyOperator;
  private readonly insertRow;
  private readonly deleteRow;
  private readonly tokenUpdate;

  constructor(db: Db) {
    this.byHash = db.prepare<[Buffer], OperatorRow>(
      'SELECT id, name, token_hash, created_at FROM operators WHERE token_hash = ?',
    );
    this.byName = db.prepare<[string], OperatorRow>(
      'SELECT id, name, token_hash, created_at FROM operators WHERE name = ?',
    );
    this.everyOperator = db.prepare<[], OperatorRow>(
      'SELECT id, name, token_hash, created_at FROM operators ORDER BY name',
    );
    this.insertRow = db.prepare<[string, Buffer, number]>(
      'INSERT INTO operators (name, token_hash, created_at) VALUES (?, ?, ?)',
    );
    this.deleteRow = db.prepare<[string]>('DELETE FROM operators WHERE name = ?');
    this.tokenUpdate = db.prepare<[Buffer, string]>('UPDATE operators SET token_hash = ? WHERE name = ?');
  }

  /** The operator whose token has this SHA-256 (one indexed read: the UNIQUE index). */
  findByTokenHash(hash: Buffer): OperatorRow | undefined {
    return this.byHash.get(hash);
  }

  findByName(name: string): OperatorRow | undefined {
    return this.byName.get(name);
  }

  list(): OperatorRow[] {
    return this.everyOperator.all();
  }

  insert(name: string, tokenHash: Buffer, nowMs: number): number {
    return Number(this.insertRow.run(name, tokenHash, nowMs).lastInsertRowid);
  }

  /** True when an operator of that name had its token replaced. */
  replaceToken(name: string, tokenHash: Buffer): boolean {
    return this.tokenUpdate.run(tokenHash, name).changes === 1;
  }

  /** True when an operator of that name was removed. */
  remove(name: string): boolean {
    return this.deleteRow.run(name).changes === 1;
  }
}
