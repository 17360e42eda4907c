// Our Kysely driver over better-sqlite3 (api/db/kysely-sqlite.ts) on a real
// WAL file: queries, transactions, the statement cache and its bound, and
// write transactions that take the write lock at BEGIN (IMMEDIATE), which a
// second connection to the file sees.
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Generated } from 'kysely';
import { BetterSqliteDialect } from '../../../api/db/kysely-sqlite.js';
import { waitFor } from '../../helpers/wait.js';

interface Schema {
  items: { id: Generated<number>; name: string; size: number };
}

interface Store {
  path: string;
  raw: Database.Database;
  db: Kysely<Schema>;
  /** How many times `raw.prepare` was called since the store was made. */
  prepares: () => number;
}

function store(t: ExecutionContext, statementCacheSize?: number): Store {
  const folder = mkdtempSync(join(tmpdir(), 'parkbench-kysely-'));
  const path = join(folder, 'test.sqlite');
  const raw = new Database(path);
  raw.pragma('journal_mode = WAL');
  raw.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, size INTEGER NOT NULL)');
  let prepares = 0;
  const prepare = raw.prepare.bind(raw);
  // Counts the real prepares (the statement is still better-sqlite3's own).
  raw.prepare = (source: string) => {
    prepares += 1;
    return prepare(source);
  };
  const db = new Kysely<Schema>({ dialect: new BetterSqliteDialect({ database: raw, statementCacheSize }) });
  t.teardown(async () => {
    await db.destroy();
    raw.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { path, raw, db, prepares: () => prepares };
}

/** A second connection to the file that does not wait for a lock. */
function otherConnection(t: ExecutionContext, path: string): Database.Database {
  const other = new Database(path);
  other.pragma('busy_timeout = 0');
  t.teardown(() => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
  });
  return other;
}

test('inserts, selects, updates and deletes: rows, affected counts, insert ids, RETURNING', async (t) => {
  const { db } = store(t);
  const inserted = await db.insertInto('items').values({ name: 'a', size: 1 }).executeTakeFirstOrThrow();
  t.is(inserted.insertId, 1n);
  const returned = await db
    .insertInto('items')
    .values([
      { name: 'b', size: 2 },
      { name: 'c', size: 3 },
    ])
    .returning(['id', 'name'])
    .execute();
  t.deepEqual(returned, [
    { id: 2, name: 'b' },
    { id: 3, name: 'c' },
  ]);
  const updated = await db.updateTable('items').set({ size: 10 }).where('size', '>=', 2).executeTakeFirstOrThrow();
  t.is(updated.numUpdatedRows, 2n);
  const deleted = await db.deleteFrom('items').where('name', '=', 'a').executeTakeFirstOrThrow();
  t.is(deleted.numDeletedRows, 1n);
  t.deepEqual(await db.selectFrom('items').select(['name', 'size']).orderBy('id').execute(), [
    { name: 'b', size: 10 },
    { name: 'c', size: 10 },
  ]);
  const streamed: string[] = [];
  for await (const row of db.selectFrom('items').select('name').orderBy('id').stream()) streamed.push(row.name);
  t.deepEqual(streamed, ['b', 'c']);
});

test('a failing statement rejects and leaves the connection usable', async (t) => {
  const { db } = store(t);
  await db.insertInto('items').values({ name: 'a', size: 1 }).execute();
  await t.throwsAsync(db.insertInto('items').values({ name: 'a', size: 2 }).execute(), {
    any: true,
    message: /UNIQUE/,
  });
  t.is((await db.selectFrom('items').select('size').executeTakeFirstOrThrow()).size, 1);
});

test('a transaction commits, or rolls back everything when its callback throws', async (t) => {
  const { db, raw } = store(t);
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('items').values({ name: 'kept', size: 1 }).execute();
  });
  await t.throwsAsync(
    db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ name: 'lost', size: 2 }).execute();
      throw new Error('changed my mind');
    }),
    { message: 'changed my mind' },
  );
  t.false(raw.inTransaction);
  t.deepEqual(
    (await db.selectFrom('items').select('name').execute()).map((row) => row.name),
    ['kept'],
  );
});

test('savepoints of a controlled transaction: rolling back to one keeps what came before it', async (t) => {
  const { db } = store(t);
  const trx = await db.startTransaction().execute();
  await trx.insertInto('items').values({ name: 'before', size: 1 }).execute();
  const point = await trx.savepoint('unit one').execute();
  await point.insertInto('items').values({ name: 'after', size: 2 }).execute();
  await point.rollbackToSavepoint('unit one').execute();
  await trx.commit().execute();
  t.deepEqual(
    (await db.selectFrom('items').select('name').execute()).map((row) => row.name),
    ['before'],
  );
});

test('statements are prepared once and kept, up to the bound, the least recently used evicted first', async (t) => {
  const { db, prepares } = store(t, 3);
  const select = (size: number) => sql`SELECT ${sql.lit(size)} AS size`.execute(db);
  {
    const before = prepares();
    for (let round = 0; round < 5; round++) await select(1);
    t.is(prepares() - before, 1, 'one statement run 5 times is prepared once');
    await select(2);
    await select(3);
    await select(4); // evicts 1, the least recently used
    t.is(prepares() - before, 4);
    await select(3);
    await select(4);
    t.is(prepares() - before, 4, 'kept ones are not prepared again');
    await select(1);
    t.is(prepares() - before, 5, 'the evicted one is prepared again');
  }
});

test('a write transaction holds the write lock from BEGIN: another connection cannot take it until commit', async (t) => {
  const { db, path } = store(t);
  const other = otherConnection(t, path);
  const trx = await db.startTransaction().execute();
  // Nothing run in the transaction yet: a deferred BEGIN would hold no lock.
  t.throws(() => other.exec('BEGIN IMMEDIATE'), { any: true, code: 'SQLITE_BUSY' });
  await trx.insertInto('items').values({ name: 'a', size: 1 }).execute();
  await trx.commit().execute();
  other.exec('BEGIN IMMEDIATE');
  other.exec('ROLLBACK');
  t.pass();
});

// Another process, as a second parkbench on the file would be: it asks for
// the write lock with a busy timeout and says when it has it.
const OTHER_WRITER = `
  import Database from 'better-sqlite3';
  const db = new Database(process.argv[1]);
  db.pragma('busy_timeout = 10000');
  console.log('trying');
  db.exec('BEGIN IMMEDIATE');
  console.log('locked');
  db.exec('ROLLBACK');
  db.close();
`;

test('a second process asking for the write lock waits on its busy timeout until the transaction commits', async (t) => {
  const { db, path } = store(t);
  const trx = await db.startTransaction().execute();
  const child = spawn(process.execPath, ['--input-type=module', '-e', OTHER_WRITER, path], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let committed = false;
  const lockedAfterCommit = new Promise<boolean>((resolve) =>
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line === 'locked') resolve(committed);
    }),
  );
  await waitFor(() => lines.includes('trying'), 'the other process to start', 15_000);
  // Nothing in the transaction yet: with a deferred BEGIN the other process
  // would have the lock at once. Give it time to take it, in vain.
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.false(lines.includes('locked'), 'the other process still waits');
  committed = true;
  await trx.commit().execute();
  t.true(await lockedAfterCommit, 'it got the lock once the transaction committed');
});

test('a read-only transaction begins deferred: another connection may still write', async (t) => {
  const { db, path } = store(t);
  const other = otherConnection(t, path);
  const trx = await db.startTransaction().setAccessMode('read only').execute();
  other.exec("INSERT INTO items (name, size) VALUES ('other', 1)");
  t.is((await trx.selectFrom('items').select('name').executeTakeFirstOrThrow()).name, 'other');
  await trx.commit().execute();
});

test("Kysely's own SqliteDialect begins deferred (why we replace it): the other connection takes the lock", async (t) => {
  const { path } = store(t);
  const raw = new Database(path);
  const theirs = new Kysely<Schema>({ dialect: new SqliteDialect({ database: raw }) });
  t.teardown(() => theirs.destroy());
  const other = otherConnection(t, path);
  const trx = await theirs.startTransaction().execute();
  other.exec('BEGIN IMMEDIATE');
  other.exec('ROLLBACK');
  await trx.rollback().execute();
  t.pass();
});

test('the driver refuses an isolation level SQLite does not have', async (t) => {
  const { db } = store(t);
  await t.throwsAsync(
    db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async () => {}),
    {
      message: /serializable/,
    },
  );
});
