// Group commit (api/db/group-commit.ts): units of one turn share a
// transaction, each all or nothing in its savepoint, settled only after the
// commit; a failed commit loses the group and rejects every unit.
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { GroupCommit } from '../../../api/db/group-commit.js';
import { openDatabase, type Db } from '../../../api/db/open.js';
import { sqliteStore, type Executor } from '../../../api/db/store.js';
import { tempDir } from '../../helpers/api-app.js';
import { messageOf } from '../../../lib/message-of.js';

function database(t: Parameters<typeof tempDir>[0]): { db: Db; path: string } {
  const path = join(tempDir(t, 'parkbench-group-'), 'group.sqlite');
  const db = openDatabase(path);
  db.exec(
    'CREATE TABLE parents (id INTEGER PRIMARY KEY); CREATE TABLE items (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parents(id), name TEXT NOT NULL)',
  );
  db.prepare('INSERT INTO parents (id) VALUES (1)').run();
  t.teardown(() => db.close());
  return { db, path };
}

function insertItems(db: Db, names: string[]): number[] {
  const insert = db.prepare('INSERT INTO items (parent_id, name) VALUES (1, ?)');
  return names.map((name) => Number(insert.run(name).lastInsertRowid));
}

test('units of one turn share one transaction and each gets its own result', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db));
  const results = await Promise.all([
    group.run(() => insertItems(db, ['a', 'b'])),
    group.run(() => insertItems(db, ['c'])),
    group.run(() => 'no writes'),
  ]);
  t.deepEqual(results, [[1, 2], [3], 'no writes']);
  t.deepEqual(group.counters, { groups: 1, units: 3 });
  t.is((db.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 3);
});

test('a unit that throws is rolled back alone and rejects with its error; its neighbours are committed', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db));
  const [first, failing, last] = await Promise.allSettled([
    group.run(() => insertItems(db, ['kept 1'])),
    group.run(() => {
      insertItems(db, ['rolled back']);
      throw new Error('refused');
    }),
    group.run(() => insertItems(db, ['kept 2'])),
  ]);
  t.is(first.status, 'fulfilled');
  t.is(failing.status, 'rejected');
  t.is(failing.status === 'rejected' ? messageOf(failing.reason) : '', 'refused');
  t.is(last.status, 'fulfilled');
  t.deepEqual(
    (db.prepare('SELECT name FROM items ORDER BY id').all() as { name: string }[]).map((row) => row.name),
    ['kept 1', 'kept 2'],
  );
  t.is(group.counters.groups, 1);
});

test('a promise settles only once the group is committed: another connection already sees the rows', async (t) => {
  const { db, path } = database(t);
  const reader = new Database(path, { readonly: true });
  t.teardown(() => reader.close());
  const group = new GroupCommit(sqliteStore(db));
  const pending = group.run(() => insertItems(db, ['x', 'y']));
  t.is((reader.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 0, 'nothing before the turn ends');
  await pending;
  t.is((reader.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 2);
});

test('a failed COMMIT writes nothing of the group and rejects every unit', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db));
  const outcomes = await Promise.allSettled([
    group.run(() => insertItems(db, ['innocent'])),
    group.run(() => {
      // Checked at COMMIT only: the whole transaction fails there.
      db.pragma('defer_foreign_keys = ON');
      db.prepare("INSERT INTO items (parent_id, name) VALUES (99, 'orphan')").run();
    }),
  ]);
  t.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['rejected', 'rejected'],
  );
  t.regex(outcomes[0].status === 'rejected' ? messageOf(outcomes[0].reason) : '', /FOREIGN KEY/);
  t.is((db.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 0);
  t.false(db.inTransaction);
  // The next group works.
  t.deepEqual(await group.run(() => insertItems(db, ['after'])), [1]);
});

test('past the group limit, the units beyond it go in the next groups (a turn each), in order', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db), 2);
  const results = await Promise.all([1, 2, 3, 4, 5].map((n) => group.run(() => insertItems(db, [`item ${n}`])[0])));
  t.deepEqual(results, [1, 2, 3, 4, 5]);
  t.deepEqual(group.counters, { groups: 3, units: 5 });
});

test('the inputs of a shared work in one group are answered by one call, beside units of their own', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db));
  const calls: string[][] = [];
  const shared = {
    runAll: (_on: Executor, names: readonly string[]) => (calls.push([...names]), insertItems(db, [...names])),
  };
  const results = await Promise.all([
    group.runShared(shared, 'm1'),
    group.run(() => insertItems(db, ['http'])),
    group.runShared(shared, 'm2'),
    group.runShared(shared, 'm3'),
  ]);
  t.deepEqual(calls, [['m1', 'm2', 'm3']], 'one call for the three inputs');
  t.deepEqual(results, [1, [4], 2, 3], 'each input gets its own answer; the shared work ran where its first input was');
  t.deepEqual(group.counters, { groups: 1, units: 4 });
  t.is(group.ranAlone, 0);
});

test('a shared run that fails is rolled back and each input runs again alone: only the poison rejects, the others are written once', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db));
  let calls = 0;
  const shared = {
    runAll: (_on: Executor, names: readonly string[]) => {
      calls += 1;
      // Writes its neighbours first, then fails: what it wrote must go.
      return names.map((name) => {
        const [id] = insertItems(db, [name]);
        if (name === 'poison') throw new Error('poisoned');
        return id;
      });
    },
  };
  const outcomes = await Promise.allSettled(['a', 'b', 'poison', 'c'].map((name) => group.runShared(shared, name)));
  t.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
  );
  t.like(outcomes[2], { status: 'rejected', reason: { message: 'poisoned' } });
  t.deepEqual(
    (db.prepare('SELECT name FROM items ORDER BY id').all() as { name: string }[]).map((row) => row.name),
    ['a', 'b', 'c'],
    'each good input written once, nothing of the poison',
  );
  t.is(calls, 1 + 4, 'once together, then once per input');
  t.is(group.ranAlone, 4);
  t.is(group.counters.groups, 1, 'all in the one transaction');
});

test('afterCommit: callbacks of kept units run after the COMMIT, those of a rolled-back unit never; outside a unit it says no', async (t) => {
  const { db } = database(t);
  const group = new GroupCommit(sqliteStore(db));
  const ran: string[] = [];
  t.false(
    group.afterCommit(() => ran.push('outside')),
    'not in a unit: the caller does it now',
  );
  const [kept, failing] = await Promise.allSettled([
    group.run(() => {
      insertItems(db, ['kept']);
      group.afterCommit(() => {
        t.false(db.inTransaction, 'after the COMMIT');
        ran.push('kept');
      });
    }),
    group.run(() => {
      group.afterCommit(() => ran.push('rolled back'));
      throw new Error('refused');
    }),
  ]);
  t.is(kept.status, 'fulfilled');
  t.is(failing.status, 'rejected');
  t.deepEqual(ran, ['kept']);
  // A shared work that fails together runs each input alone: only the survivors' callbacks run, once.
  const shared = {
    runAll: (_on: Executor, inputs: readonly string[]) =>
      inputs.map((input) => {
        group.afterCommit(() => ran.push(`shared ${input}`));
        if (input === 'bad') throw new Error('bad input');
        return input;
      }),
  };
  const outcomes = await Promise.allSettled([group.runShared(shared, 'a'), group.runShared(shared, 'bad')]);
  t.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'rejected'],
  );
  t.deepEqual(ran, ['kept', 'shared a']);
});
