// The README's CI block ("CI author: run simulated barriers in CI"), taken
// from README.md as it is and run as a script, twice in a row in the same
// folder: each run passes (exit 0, a JUnit report without failures) and
// leaves nothing running. Its only setting is the folder: `npx parkbench`
// there is this repository's bin.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testNeeding } from '../helpers/requires.js';
import { folderWithParkbench, processGone, runScript, type ScriptFolder } from '../helpers/shell-script.js';

// One after the other, in one folder.
const serialTest = testNeeding('socat', test.serial);

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The first ```sh block after the CI author's heading. */
async function ciBlock(): Promise<string> {
  const text = await readFile(README, 'utf8');
  const section = text.indexOf('### CI author: run simulated barriers in CI');
  const match = section < 0 ? null : /```sh\n([\s\S]*?)```/.exec(text.slice(section));
  if (match?.[1] === undefined) throw new Error("README.md has no CI author's sh block");
  return match[1];
}

let folder: ScriptFolder | undefined;
test.before(async () => {
  folder = await folderWithParkbench();
});
test.after.always(async () => {
  await folder?.remove();
});

for (const run of ['first', 'second, right after the first']) {
  serialTest(`the README CI block passes as written: ${run} run, and leaves nothing running`, async (t) => {
    const path = folder?.path ?? '';
    const result = await runScript(t, path, await ciBlock());
    t.is(result.code, 0, result.stdout + result.stderr);
    t.regex(result.stdout, /^37 passed, 0 failed, 1 skipped of 38 \(serial, module 9101, /m);
    const junit = await readFile(join(path, 'data', 'ci', 'conformance.xml'), 'utf8');
    t.regex(junit, /<testsuite [^>]*tests="38" failures="0"/);
    // socat, npx and the simulator it started: all gone with the script.
    await processGone(-result.group);
    t.pass();
  });
}
