// Migrations on PostgreSQL (issue 18; not used by the app yet): the baseline
// (api/db/postgres-baseline.ts) on an empty database, recorded as every
// SQLite version up to it, then the migrations after it, each in its own
// transaction (DDL is transactional on PostgreSQL). All under a session
// advisory lock: two processes starting together on one database migrate it
// once, the second waiting at the lock and then finding nothing to do.
// Refused like SQLite's (api/db/migrations.ts, checkSchema): another
// program's tables, or a version this parkbench does not know.
import type pg from 'pg';
import { MIGRATIONS, type Migration } from './migrations.js';
import { POSTGRES_BASELINE_SQL, POSTGRES_BASELINE_VERSION } from './postgres-baseline.js';
import { DatabaseRefusedError } from './refused.js';

/** pg_advisory_lock's key for parkbench's migrations: any constant of ours
 * ("pkbm" in ASCII); another program using the same number would only wait. */
export const MIGRATION_LOCK_KEY = 0x706b626d;

/** A migration after the baseline, written for PostgreSQL. */
export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

export interface PostgresMigrationPlan {
  /** The versions the baseline stands for, with their names (SQLite's list up to it). */
  baseline: readonly Pick<Migration, 'version' | 'name'>[];
  baselineSql: string;
  later: readonly PostgresMigration[];
}

export const POSTGRES_MIGRATIONS: PostgresMigrationPlan = {
  baseline: MIGRATIONS.filter((migration) => migration.version <= POSTGRES_BASELINE_VERSION),
  baselineSql: POSTGRES_BASELINE_SQL,
  later: [],
};

/** Applies what is missing; resolves with how many versions this call recorded. */
export async function migratePostgres(
  pool: pg.Pool,
  plan: PostgresMigrationPlan = POSTGRES_MIGRATIONS,
  where = 'the PostgreSQL database',
): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await migrateLocked(client, plan, where);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}

async function migrateLocked(client: pg.PoolClient, plan: PostgresMigrationPlan, where: string): Promise<number> {
  const tables = (
    await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    )
  ).rows.map((row) => row.name);
  let recorded = 0;
  if (!tables.includes('migrations')) {
    if (tables.length > 0) {
      const shown = tables.length > 5 ? `${tables.slice(0, 5).join(', ')}, ...` : tables.join(', ');
      throw new DatabaseRefusedError(
        `${where} is not a parkbench database (tables ${shown} and no migrations table): parkbench will not add its tables to it; give another DATABASE_URL`,
      );
    }
    await inTransaction(client, async () => {
      await client.query(plan.baselineSql);
      for (const migration of plan.baseline)
        await client.query('INSERT INTO migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
    });
    recorded += plan.baseline.length;
  }
  const applied = new Set(
    (await client.query<{ version: number }>('SELECT version FROM migrations')).rows.map((row) => row.version),
  );
  const known = new Set([...plan.baseline, ...plan.later].map((migration) => migration.version));
  const unknown = [...applied].filter((version) => !known.has(version));
  if (unknown.length > 0)
    throw new DatabaseRefusedError(
      `${where} is at migration ${Math.max(...applied)}, which this parkbench does not know (it knows migrations up to ${Math.max(...known)}): use the parkbench that wrote it, or a newer one`,
    );
  for (const migration of plan.later) {
    if (applied.has(migration.version)) continue;
    await inTransaction(client, async () => {
      await client.query(migration.sql);
      await client.query('INSERT INTO migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    });
    recorded += 1;
  }
  return recorded;
}

async function inTransaction(client: pg.PoolClient, work: () => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
