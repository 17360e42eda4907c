// The database a benchmark run stores into: a SQLite file in the run's
// folder, or a database on a PostgreSQL server started for the benchmark
// (`--store postgres`), as durable as the SQLite store (fsync on,
// synchronous_commit off). On PostgreSQL it also measures the floor: the
// server's own bulk insert of the same box-log rows, on the same server in
// the same run (perf/support/pg-floor-cases.ts).
import { join } from 'node:path';
import pg from 'pg';
import { parsePostgresUrl } from '../../api/config/index.js';
import type { StoreConfig } from '../../api/db/open-store.js';
import { startPostgres, type PostgresServer } from '../../testkit/postgres-server.js';
import {
  DURABLE_AS_SQLITE,
  FLOOR_SCHEMA,
  measure,
  rowsLike,
  unnestCase,
  valuesCase,
  type Figure,
} from './pg-floor-cases.js';

export type BenchStore = 'sqlite' | 'postgres';

export interface BenchDatabase {
  /** What `parkbench api` is given: DATABASE_PATH or DATABASE_URL. */
  env: Record<string, string>;
  /** The same, for openStore in the benchmark's own process (seeding, counting). */
  config: StoreConfig;
}

export interface BenchDatabases {
  readonly store: BenchStore;
  /** A new, empty database named after the run. */
  fresh(name: string): Promise<BenchDatabase>;
  /** PostgreSQL's own insert of `rows`-row statements from `clients`
   * connections (VALUES for 50 rows, as a POST; unnest for more, as a
   * group of MQTT messages); undefined on SQLite. */
  floor(rows: number, clients: number, seconds: number): Promise<Figure | undefined>;
  stop(): Promise<void>;
}

/** `--store` of a benchmark's command line. */
export function benchStoreOf(value: string | undefined): BenchStore {
  if (value === undefined || value === 'sqlite') return 'sqlite';
  if (value === 'postgres') return 'postgres';
  throw new Error(`--store must be sqlite or postgres, got "${value}"`);
}

export async function benchDatabases(store: BenchStore, directory: string): Promise<BenchDatabases> {
  if (store === 'sqlite')
    return {
      store,
      fresh: (name) => {
        const path = join(directory, `${name}.sqlite`);
        return Promise.resolve({
          env: { DATABASE_PATH: path },
          config: { databasePath: path, databaseUrl: undefined, databaseBusyTimeoutMs: 5_000 },
        });
      },
      floor: () => Promise.resolve(undefined),
      stop: () => Promise.resolve(),
    };
  const server = await startPostgres({ settings: DURABLE_AS_SQLITE });
  let made = 0;
  return {
    store,
    fresh: async (name) => {
      const url = await created(server, `bench_${++made}_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`);
      return {
        env: { DATABASE_URL: url },
        config: { databasePath: '', databaseUrl: parsePostgresUrl(url), databaseBusyTimeoutMs: 5_000 },
      };
    },
    floor: async (rows, clients, seconds) => {
      const url = await created(server, `floor_${++made}`);
      const pool = new pg.Pool({ connectionString: url, max: clients });
      pool.on('error', () => undefined);
      try {
        await pool.query(FLOOR_SCHEMA);
        const kase = rows === 50 ? valuesCase(rows) : unnestCase(rows);
        return await measure(pool, clients, kase, rowsLike(rows), seconds);
      } finally {
        await pool.end();
      }
    },
    stop: () => server.stop(),
  };
}

async function created(server: PostgresServer, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
}
