// PostgreSQL's migrations: on an empty database the baseline (the PostgreSQL
// step of POSTGRES_BASELINE_VERSION, api/db/migrations/), recorded as every
// version up to it, then the versions after it, each in its own transaction
// (DDL is transactional on PostgreSQL). All under a session
// advisory lock: two processes starting together on one database migrate it
// once, the second waiting at the lock and then finding nothing to do.
// Refused like SQLite's (api/db/migrate-sqlite.ts, checkSchema): another
// program's tables, or a version this parkbench does not know.
import type pg from 'pg';
import { MIGRATIONS, POSTGRES_BASELINE_VERSION, type Migration } from './migrations/index.js';
import { DatabaseRefusedError } from './refused.js';

/** pg_advisory_lock's key for parkbench's migrations: any constant of ours
 * ("pkbm" in ASCII); another program using the same number would only wait. */
export const MIGRATION_LOCK_KEY = 0x706b626d;

/** A version after the baseline: its PostgreSQL step. */
export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

export interface PostgresMigrationPlan {
  /** The versions the baseline stands for, with their names. */
  baseline: readonly Pick<Migration, 'version' | 'name'>[];
  baselineSql: string;
  later: readonly PostgresMigration[];
}

export const POSTGRES_MIGRATIONS: PostgresMigrationPlan = planOf(MIGRATIONS);

/** The plan of a list of versions whose first PostgreSQL step is the baseline. */
function planOf(migrations: readonly Migration[]): PostgresMigrationPlan {
  const baselineSql = migrations.find((migration) => migration.version === POSTGRES_BASELINE_VERSION)?.postgres ?? null;
  if (baselineSql === null) throw new Error(`version ${POSTGRES_BASELINE_VERSION} has no PostgreSQL step`);
  const later = migrations.filter((migration) => migration.version > POSTGRES_BASELINE_VERSION);
  return {
    baseline: migrations
      .filter((migration) => migration.version <= POSTGRES_BASELINE_VERSION)
      .map(({ version, name }) => ({ version, name })),
    baselineSql,
    later: later.map(({ version, name, postgres }) => {
      if (postgres === null) throw new Error(`version ${version} comes after the baseline and has no PostgreSQL step`);
      return { version, name, sql: postgres };
    }),
  };
}

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
  const tables = await tablesOf(client);
  let recorded = 0;
  if (!tables.includes('migrations')) {
    if (tables.length > 0) throw notParkbench(where, tables);
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
  const known = [...plan.baseline, ...plan.later].map((migration) => migration.version);
  if ([...applied].some((version) => !known.includes(version))) throw tooNew(where, applied, known);
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

/**
 * For a command that only reads: the database must be parkbench's, and
 * migrated up to this parkbench's last version already (reading it writes
 * nothing, so it cannot migrate). Refused as by migratePostgres otherwise;
 * also when it holds no parkbench tables yet.
 */
export async function checkPostgresCurrent(
  pool: pg.Pool,
  plan: PostgresMigrationPlan = POSTGRES_MIGRATIONS,
  where = 'the PostgreSQL database',
): Promise<void> {
  const tables = await tablesOf(pool);
  if (!tables.includes('migrations')) {
    if (tables.length === 0)
      throw new DatabaseRefusedError(
        `${where} holds no parkbench database (it is empty): a command that writes (or parkbench api) creates it`,
      );
    throw notParkbench(where, tables);
  }
  const applied = new Set(
    (await pool.query<{ version: number }>('SELECT version FROM migrations')).rows.map((row) => row.version),
  );
  const known = [...plan.baseline, ...plan.later].map((migration) => migration.version);
  const unknown = [...applied].filter((version) => !known.includes(version));
  if (unknown.length > 0) throw tooNew(where, applied, known);
  if (known.every((version) => applied.has(version))) return;
  throw new DatabaseRefusedError(
    `${where} is at migration ${Math.max(0, ...applied)}; this parkbench needs migration ${Math.max(...known)}: a command that writes (or parkbench api) migrates it, a read-only one does not`,
  );
}

async function tablesOf(client: pg.Pool | pg.PoolClient): Promise<string[]> {
  return (
    await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    )
  ).rows.map((row) => row.name);
}

function notParkbench(where: string, tables: string[]): DatabaseRefusedError {
  const shown = tables.length > 5 ? `${tables.slice(0, 5).join(', ')}, ...` : tables.join(', ');
  return new DatabaseRefusedError(
    `${where} is not a parkbench database (tables ${shown} and no migrations table): parkbench will not add its tables to it; give another DATABASE_URL`,
  );
}

function tooNew(where: string, applied: Set<number>, known: number[]): DatabaseRefusedError {
  return new DatabaseRefusedError(
    `${where} is at migration ${Math.max(...applied)}, which this parkbench does not know (it knows migrations up to ${Math.max(...known)}): use the parkbench that wrote it, or a newer one`,
  );
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
