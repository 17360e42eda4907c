// The SessionCreation of a store's engine (creation.ts): apart, so that the
// interface's file imports neither implementation.
import type { Store } from '../db/store.js';
import type { SessionCreation } from './creation.js';
import { type PostgresCreationDeps, PostgresSessionCreation } from './creation-postgres.js';
import { type SqliteCreationDeps, SqliteSessionCreation } from './creation-sqlite.js';

export function sessionCreationOf(store: Store, deps: SqliteCreationDeps & PostgresCreationDeps): SessionCreation {
  return store.dialect === 'sqlite' ? new SqliteSessionCreation(deps) : new PostgresSessionCreation(store, deps);
}
