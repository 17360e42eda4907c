// Operator accounts for the operator HTTP API (/api/operator/...): `parkbench
// admin operator add|remove|list` calls these. The token is returned once and
// stored as its SHA-256 only.
//
// Why SHA-256 and not scrypt (as for passwords): the token is 256 random bits
// (newToken), not chosen by a person, so no dictionary or brute force can
// reach it and a slow hash would protect nothing; a fast hash keeps each
// authenticated request at one hash and one indexed read (the same choice as
// the drivers' access tokens and the client secrets, api/auth/secrets.ts). A
// stolen database yields hashes, not usable tokens.
import { newToken, tokenHash } from '../auth/secrets.js';
import type { Db } from '../db/open.js';
import { conflict, notFound } from '../domain-error.js';
import { OperatorRepository } from './repository.js';

export interface AddedOperator {
  name: string;
  /** The bearer token: shown now only. */
  token: string;
}

export interface OperatorListing {
  name: string;
  created_at: string;
}

export function addOperator(db: Db, name: string, nowMs: number): AddedOperator {
  const operators = new OperatorRepository(db);
  const token = newToken();
  return db.transaction(() => {
    if (operators.findByName(name)) throw conflict(`an operator named "${name}" exists already`);
    operators.insert(name, tokenHash(token), nowMs);
    return { name, token };
  })();
}

/** The operator `name` with a fresh token: created when missing, else its
 * token replaced (the previous one is refused from the next request on). What
 * `parkbench start` does for the bench page's login, each start. */
export function ensureOperator(db: Db, name: string, nowMs: number): AddedOperator {
  const operators = new OperatorRepository(db);
  const token = newToken();
  db.transaction(() => {
    if (!operators.replaceToken(name, tokenHash(token))) operators.insert(name, tokenHash(token), nowMs);
  })();
  return { name, token };
}

/** Deletes the operator: its token is refused on the next request (nothing caches operator tokens). */
export function removeOperator(db: Db, name: string): { name: string; removed: true } {
  if (!new OperatorRepository(db).remove(name)) throw notFound(`no operator named "${name}"`);
  return { name, removed: true };
}

export function listOperators(db: Db): OperatorListing[] {
  return new OperatorRepository(db)
    .list()
    .map((row) => ({ name: row.name, created_at: new Date(row.created_at).toISOString() }));
}
