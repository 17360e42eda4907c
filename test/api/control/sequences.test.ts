// The control sequence stays one per box across processes: two
// processes on the same database take sequences of one box at the same
// time, each in one atomic write; no number is given twice and none is lost.
import test from 'ava';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('../../fixtures/allocate-control-seqs.ts', import.meta.url));

async function allocateInTwoProcesses(
  databasePath: string,
  moduleId: number,
  count: number,
  mode: 'atomic' | 'read-then-write',
): Promise<number[][]> {
  const start = String(Date.now() + 3_000);
  const one = () =>
    run(process.execPath, ['--import', 'tsx', fixture, databasePath, String(moduleId), String(count), start, mode], {
      timeout: 60_000,
    });
  const results = await Promise.all([one(), one()]);
  return results.map((result) => JSON.parse(result.stdout) as number[]);
}

test('two processes taking sequences of one box at once: every number once, none skipped (SQLite: two processes on one file; on PostgreSQL, two pools in test/api/control/queue-store.test.ts)', async (t) => {
  const app = await testApp(t, {}, { store: 'sqlite' });
  const parking = await seedParking(app, { boxes: ['entrance'] });
  const moduleId = parking.entrance.moduleId;
  const count = 2_000;
  const [first = [], second = []] = await allocateInTwoProcesses(
    join(app.dir, 'db', 'test.sqlite'),
    moduleId,
    count,
    'atomic',
  );
  const all = [...first, ...second].sort((a, b) => a - b);
  t.is(new Set(all).size, 2 * count, 'no sequence given twice');
  t.deepEqual(
    all,
    Array.from({ length: 2 * count }, (_, index) => index + 1),
  );
  t.is((await app.ctx.boxes.findByModuleId(moduleId))?.next_control_seq, 2 * count + 1);
});
