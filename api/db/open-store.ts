// Opens the server database the configuration names: PostgreSQL when
// DATABASE_URL is set, else the SQLite file at DATABASE_PATH. The one place
// that chooses the engine: the API (api/db/plugin.ts) and every admin
// command (cli/admin/context.ts) open their store here, so `--database`
// takes a path or a postgres:// URL alike.
import type { ApiConfig } from '../config.js';
import { openDatabase } from './open.js';
import { openPostgresStore, sqliteStore, type Store } from './store.js';

export interface OpenStoreOptions {
  /** Only read: never create nor migrate (a missing or older database is refused). */
  readonly?: boolean;
  /** PostgreSQL: an idle pooled connection's error (the server went away). */
  onIdleError: (error: Error) => void;
  /** PostgreSQL: pool connections at most. */
  maxConnections?: number;
}

export type StoreConfig = Pick<ApiConfig, 'databasePath' | 'databaseUrl' | 'databaseBusyTimeoutMs'>;

/** The store, open and migrated; its `close` closes what it opened (the file or the pool). */
export async function openStore(config: StoreConfig, options: OpenStoreOptions): Promise<Store> {
  const readonly = options.readonly === true;
  if (config.databaseUrl !== undefined)
    return openPostgresStore(config.databaseUrl, {
      onIdleError: options.onIdleError,
      where: config.databaseUrl.shown,
      readonly,
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    });
  const db = openDatabase(config.databasePath, { busyTimeoutMs: config.databaseBusyTimeoutMs, readonly });
  const store = sqliteStore(db);
  return {
    ...store,
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}

/** Where the store is, for messages: the file, or the URL with its password masked. */
export function storeLocation(config: StoreConfig): string {
  return config.databaseUrl?.shown ?? config.databasePath;
}
