// test/helpers/requires.ts decides, from PATH and CI, whether the tests that
// need a Debian tool run, are skipped with one line, or fail the file. Each
// case runs the helper in a real child process with its own PATH and CI.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { missingToolLine, onPath } from './requires.js';

const helper = fileURLToPath(new URL('./requires.ts', import.meta.url));

async function folder(t: ExecutionContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-requires-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** Declares two tests through `testNeeding('socat', …)` with a stand-in for ava's `test` that prints what it was asked. */
function declareTwo(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = [
    `import { testNeeding } from ${JSON.stringify(helper)};`,
    "const fake = Object.assign((title) => console.log('run ' + title), { skip: (title) => console.log('skip ' + title) });",
    "const declare = testNeeding('socat', fake);",
    "declare('first', () => {});",
    "testNeeding('socat', fake)('second', () => {});",
  ].join('\n');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import=tsx', '--input-type=module', '-e', script],
      { env },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

test('onPath finds an executable file in a PATH folder, not a plain file or a missing one', async (t) => {
  const directory = await folder(t);
  await writeFile(join(directory, 'tool'), '#!/bin/sh\n');
  await chmod(join(directory, 'tool'), 0o755);
  await writeFile(join(directory, 'plain'), '');
  t.true(onPath('tool', `/nonexistent:${directory}`));
  t.false(onPath('plain', directory));
  t.false(onPath('missing', directory));
  t.false(onPath('tool', ''));
});

test('without the tool and without CI: the tests are skipped, titled with the package, and one line says so once', async (t) => {
  const empty = await folder(t);
  const { code, stdout, stderr } = await declareTwo({ ...process.env, PATH: empty, CI: '' });
  t.is(code, 0);
  t.is(
    stdout,
    'skip first [skipped: needs socat, apt-get install socat]\nskip second [skipped: needs socat, apt-get install socat]\n',
  );
  t.is(stderr, `skipping the tests that need socat: ${missingToolLine('socat')}\n`);
  t.regex(missingToolLine('socat'), /apt-get install socat/);
});

test('without the tool under CI=true: the same line fails the file, nothing is declared', async (t) => {
  const empty = await folder(t);
  const { code, stdout, stderr } = await declareTwo({ ...process.env, PATH: empty, CI: 'true' });
  t.is(code, 1);
  t.is(stdout, '');
  t.true(stderr.includes(`CI=true: ${missingToolLine('socat')}`), stderr);
});

test('with the tool on PATH (CI or not): the tests are declared as they are', async (t) => {
  const directory = await folder(t);
  await writeFile(join(directory, 'socat'), '#!/bin/sh\n');
  await chmod(join(directory, 'socat'), 0o755);
  for (const CI of ['', 'true']) {
    const { code, stdout, stderr } = await declareTwo({ ...process.env, PATH: directory, CI });
    t.is(code, 0);
    t.is(stdout, 'run first\nrun second\n');
    t.is(stderr, '');
  }
});
