// Two processes starting together on one fresh SQLite file (two `parkbench
// api`, or the API and an admin command) both open it to write: both switch
// it to WAL and both migrate it, and both succeed (the second waits for the
// first's write lock, then finds each migration applied). Both succeeding
// means each migration was applied once: applied twice, every one of them
// fails (a table or column that exists, or the migrations table's key).
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('../../../fixtures/migrate-fresh-files.ts', import.meta.url));

test('two processes migrating one fresh file at once, 20 times: each migration applied once, both succeed', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'parkbench-migration-race-'));
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  const rounds = 20;
  // Far enough ahead for both processes to have loaded (tsx), and rounds far
  // enough apart for a round to end before the next starts.
  const start = String(Date.now() + 4_000);
  const one = () =>
    run(process.execPath, ['--import', 'tsx', fixture, folder, String(rounds), start, '300'], { timeout: 60_000 });
  const results = (await Promise.all([one(), one()])).flatMap((result) => JSON.parse(result.stdout) as string[]);
  t.is(results.length, 2 * rounds);
  t.deepEqual(
    results.filter((result) => result !== 'ok'),
    [],
    'no process failed to open and migrate',
  );
  for (let round = 0; round < rounds; round++) {
    const db = new Database(join(folder, `round-${round}.sqlite`), { readonly: true });
    const versions = (db.prepare('SELECT version FROM migrations ORDER BY version').all() as { version: number }[]).map(
      (row) => row.version,
    );
    db.close();
    t.deepEqual(
      versions,
      MIGRATIONS.map((migration) => migration.version),
    );
  }
});
