// The capture flags of `parkbench conformance`, through the real entry
// point: a --capture-dir that is a file or cannot be made, a --capture in a
// folder that is not there, and the rotation flags without what they need
// are one line and exit 2, before any link is opened; --capture-dir is made
// when missing.
import test from 'ava';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/run-cli.js';
import { boxFile } from '../helpers/conformance-fixtures.js';

test('bad capture flags exit 2 with one line, before the link', async (t) => {
  const box = await boxFile(t, 4270);
  const aFile = join(box.directory, 'a-file');
  await writeFile(aFile, 'not a folder');
  // No broker listens on port 1: a flag that passed would end in exit 1, "cannot reach the box".
  const base = ['conformance', '--box', box.path, '--mqtt', 'mqtt://127.0.0.1:1', '--wait-ms', '0'];
  const cases: [string[], RegExp][] = [
    [['--capture-dir', aFile], /^parkbench: --capture-dir .*a-file is not a folder\n$/],
    [['--capture-dir', join(aFile, 'cases')], /^parkbench: --capture-dir .*a-file\/cases cannot be made: ENOTDIR.*\n$/],
    [['--capture-dir', ''], /^parkbench: --capture-dir needs a folder\n$/],
    [
      ['--capture', join(box.directory, 'missing', 'run.pcapng')],
      /^parkbench: --capture: capture file .*missing\/run\.pcapng: ENOENT.*\n$/,
    ],
    [['--capture', box.directory], /^parkbench: --capture: capture file .* is a directory: refused.*\n$/],
    [['--capture-dir', box.directory, '--capture-max-mb', '1'], /^parkbench: --capture-max-mb needs --capture FILE\n$/],
    [
      ['--capture', join(box.directory, 'run.pcapng'), '--capture-files', '3'],
      /^parkbench: --capture-files needs --capture-max-mb/,
    ],
    [
      ['--capture', join(box.directory, 'run.pcapng'), '--capture-max-mb', 'lots'],
      /^parkbench: --capture-max-mb must be a whole number from 1 to \d+, got "lots"\n$/,
    ],
  ];
  for (const [flags, message] of cases) {
    const result = await runCli([...base, ...flags]);
    t.is(result.code, 2, `${flags.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message, flags.join(' '));
    t.is(result.stdout, '');
  }
});

test('a --capture-dir that is not there is made, before the link', async (t) => {
  const box = await boxFile(t, 4271);
  const cases = join(box.directory, 'deep', 'cases');
  const result = await runCli([
    'conformance',
    '--box',
    box.path,
    '--mqtt',
    'mqtt://127.0.0.1:1',
    '--wait-ms',
    '0',
    '--capture-dir',
    cases,
  ]);
  t.is(result.code, 1, result.stderr);
  t.regex(result.stderr, /^parkbench: cannot reach the box over mqtt: /);
  t.true((await stat(cases)).isDirectory());
});
