// `kill $!` after `npx parkbench sim … &` in a bash script: the signal ends
// npx (npm), not the simulator it started, which then sees its parent gone
// and stops as on SIGTERM: the process ends and its --ready-file is removed.
import avaTest from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { testNeeding } from '../helpers/requires.js';
import { folderWithParkbench, processGone, runScript } from '../helpers/shell-script.js';

const test = testNeeding('socat', avaTest);

/** Starts the simulator as a script would, waits for its ready file, prints
 * the file, kills the backgrounded npx and waits for npx to end. */
function script(box: string, link: string): string {
  return `
npx parkbench sim --box ${box} --serial ${link} --memory-state --ready-file sim.ready > sim.log 2>&1 &
timeout 60 sh -c 'until [ -e sim.ready ]; do sleep 0.2; done' || exit 3
cat sim.ready
kill $!
wait $!
`;
}

test('kill $! of a backgrounded `npx parkbench sim`: the simulator stops too, and removes its ready file', async (t) => {
  const folder = await folderWithParkbench();
  t.teardown(() => folder.remove());
  const box = await boxFile(t, 4701);
  const pair = await ptyPairForTest(t);
  const result = await runScript(t, folder.path, script(box.path, pair.a));
  t.is(result.code, 143, result.stderr);
  const ready = JSON.parse(result.stdout) as { pid: number; boxes: number[]; links: string[]; serial: string };
  t.like(ready, { boxes: [4701], links: ['serial'], serial: pair.a });
  t.not(ready.pid, result.group, 'the simulator is not npx');
  await processGone(ready.pid);
  t.false(existsSync(join(folder.path, 'sim.ready')), 'the ready file is removed when it stops');
});
