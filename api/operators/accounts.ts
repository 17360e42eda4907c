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
import { newToken, tokenHash } from '../auth/index.js';
import type { Store } from '../db/store.js';
import { conflict, notFound } from '../http/domain-error.js';
import { EventTicketRepository } from './stream/tickets.js';
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

/** A new operator; a name taken already (even by a concurrent add) is a conflict. */
export async function addOperator(store: Store, name: string, nowMs: number): Promise<AddedOperator> {
  const token = newToken();
  if ((await new OperatorRepository(store).insert(name, tokenHash(token), nowMs)) === undefined)
    throw conflict(`an operator named "${name}" exists already`);
  return { name, token };
}

/** The operator `name` with a fresh token: created when missing, else its
 * token replaced (the previous one is refused from the next request on, the
 * event-stream tickets asked for with it are void, and the streams opened
 * with it end at their next flush). What `parkbench start` does for the
 * bench page's login, each start. */
export async function ensureOperator(store: Store, name: string, nowMs: number): Promise<AddedOperator> {
  const token = newToken();
  await new OperatorRepository(store).upsert(name, tokenHash(token), nowMs);
  await new EventTicketRepository(store).voidUnusedOf(name);
  return { name, token };
}

/** Deletes the operator: its token is refused on the next request (nothing
 * caches operator tokens), and its open event streams end at their next
 * flush, in whichever API process they are (api/events/owners.ts). */
export async function removeOperator(store: Store, name: string): Promise<{ name: string; removed: true }> {
  if (!(await new OperatorRepository(store).remove(name))) throw notFound(`no operator named "${name}"`);
  return { name, removed: true };
}

export async function listOperators(store: Store): Promise<OperatorListing[]> {
  return (await new OperatorRepository(store).list()).map((row) => ({
    name: row.name,
    created_at: new Date(row.created_at).toISOString(),
  }));
}
