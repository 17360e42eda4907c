// The IngestStore of a store's engine (ingest-store.ts): apart, so that the
// interface's file imports neither implementation (no import cycle).
import type { Store } from '../db/store.js';
import type { IngestStore } from './ingest-store.js';
import { PostgresIngestStore } from './ingest-store-postgres.js';
import { SqliteIngestStore } from './ingest-store-sqlite.js';

export function ingestStoreOf(store: Store): IngestStore {
  return store.dialect === 'sqlite' ? new SqliteIngestStore(store) : new PostgresIngestStore(store);
}
