// Opens the server database the configuration names: PostgreSQL when
// DATABASE_URL is set, else the SQLite file at DATABASE_PATH. The one place
// that chooses the engine: the API service (api/service.ts) and every admin
// command (cli/admin/context.ts) open their store here, so `--database`
// takes a path or a postgres:// URL alike.
import type { ApiConfig } from '../config/index.js';
import { openDatabase } from './open.js';
import { DatabaseRefusedError } from './refused.js';
import { openPostgresStore, sqliteStore, type Store } from './store.js';

export interface OpenStoreOptions {
  /** Only read: never create nor migrate (a missing or older database is refused). */
  readonly?: boolean;
  /** PostgreSQL: an idle pooled connection's error (the server went away). */
  onIdleError: (error: Error) => void;
  /** PostgreSQL: pool connections at most. */
  maxConnections?: number;
}

export type StoreConfig = Pick<ApiConfig, 'databasePath' | 'databaseUrl' | 'databaseBusyTimeoutMs'> &
  Partial<Pick<ApiConfig, 'databasePoolSize'>>;

/** The store, open and migrated; its `close` closes what it opened (the file or the pool). */
export async function openStore(config: StoreConfig, options: OpenStoreOptions): Promise<Store> {
  const readonly = options.readonly === true;
  const url = config.databaseUrl;
  if (url !== undefined) {
    try {
      return await openPostgresStore(url, {
        onIdleError: options.onIdleError,
        where: url.shown,
        readonly,
        ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
      });
    } catch (error) {
      if (error instanceof DatabaseRefusedError) throw error;
      // pg's own messages ("connect ECONNREFUSED 127.0.0.1:5432", "password
      // authentication failed for user ...") do not say which database.
      throw new Error(`PostgreSQL at ${url.shown}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }
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
