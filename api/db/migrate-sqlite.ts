// SQLite's migrations: the versions of api/db/migrations/ not yet applied,
// each in its own transaction, at start (api/db/open.ts).
import type Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { DatabaseRefusedError } from './refused.js';

/**
 * Refuses a database parkbench must not touch, before anything writes to it:
 * another program's (tables, and no `migrations` table: parkbench's tables
 * are not added to it) and one from a newer parkbench (a migration this code
 * does not know: its schema may not be what this code reads and writes).
 * Returns the versions applied (none for an empty database).
 */
export function checkSchema(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  where: string = db.name,
): number[] {
  const tables = (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((row) => row.name);
  if (!tables.includes('migrations')) {
    if (tables.length === 0) return [];
    const shown = tables.length > 5 ? `${tables.slice(0, 5).join(', ')}, ...` : tables.join(', ');
    throw new DatabaseRefusedError(
      `${where} is not a parkbench database (tables ${shown} and no migrations table): parkbench will not add its tables to it; give another --database or DATABASE_PATH`,
    );
  }
  const applied = (db.prepare('SELECT version FROM migrations ORDER BY version').all() as { version: number }[]).map(
    (row) => row.version,
  );
  const known = new Set(migrations.map((migration) => migration.version));
  const unknown = applied.filter((version) => !known.has(version));
  if (unknown.length > 0) {
    throw new DatabaseRefusedError(
      `${where} is at migration ${Math.max(...applied)}, which this parkbench does not know (it knows migrations up to ${latestVersion(migrations)}): use the parkbench that wrote it, or a newer one`,
    );
  }
  return applied;
}

/** For a database opened read-only: refused as by checkSchema, and also when
 * it lacks a migration (it cannot be migrated without writing). */
export function checkSchemaCurrent(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  where: string = db.name,
): void {
  const applied = new Set(checkSchema(db, migrations, where));
  if (applied.size === 0) throw new DatabaseRefusedError(`${where} holds no parkbench database (it is empty)`);
  if (migrations.every((migration) => applied.has(migration.version))) return;
  throw new DatabaseRefusedError(
    `${where} is at migration ${Math.max(...applied)}; this parkbench needs migration ${latestVersion(migrations)}: a command that writes (or parkbench api) migrates it, a read-only one does not`,
  );
}

function latestVersion(migrations: readonly Migration[]): number {
  return Math.max(0, ...migrations.map((migration) => migration.version));
}

/** Applies the migrations not yet applied, each in its own transaction, after
 * checkSchema. Each transaction begins IMMEDIATE (the write lock first) and
 * reads whether its migration is applied inside it: two processes starting
 * together on one file (two APIs, the API and an admin command) apply each
 * migration once, the second waiting on the busy timeout for the first's
 * commit and then finding it applied. Read before the transaction, both saw
 * it missing and the second failed ("table ... already exists"). */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number {
  checkSchema(db, migrations);
  db.exec(`CREATE TABLE IF NOT EXISTS migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  )`);
  const isApplied = db.prepare<[number]>('SELECT 1 FROM migrations WHERE version = ?').pluck();
  const record = db.prepare('INSERT INTO migrations (version, name) VALUES (?, ?)');
  const applyOnce = (migration: Migration, apply: () => void): boolean =>
    db
      .transaction(() => {
        if (isApplied.get(migration.version) !== undefined) return false;
        apply();
        record.run(migration.version, migration.name);
        return true;
      })
      .immediate();
  let count = 0;
  for (const migration of migrations) {
    const applied = migration.rebuildsTables
      ? runRebuild(db, migration, (apply) => applyOnce(migration, apply))
      : applyOnce(migration, () => db.exec(migration.sqlite));
    if (applied) count += 1;
  }
  return count;
}

/** SQLite's procedure for a table rebuild (https://www.sqlite.org/lang_altertable.html,
 * "Making Other Kinds Of Table Schema Changes"): foreign keys off outside the
 * transaction (the pragma is a no-op inside one), the change, a
 * foreign_key_check that must come back empty, commit, foreign keys back on. */
function runRebuild(
  db: Database.Database,
  migration: Migration,
  inTransaction: (apply: () => void) => boolean,
): boolean {
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    return inTransaction(() => {
      db.exec(migration.sqlite);
      const broken = db.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0)
        throw new Error(
          `migration ${migration.version} (${migration.name}) would leave ${broken.length} broken foreign key(s); nothing was changed`,
        );
    });
  } finally {
    if (foreignKeys) db.pragma('foreign_keys = ON');
  }
}
