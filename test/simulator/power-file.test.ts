// The power file's reading and watching: on, off, a missing file, nonsense
// (one warning, the switch stays), an empty file (a write under way: quiet),
// and the slow poll that finds a change no watch reported.
import test, { type ExecutionContext } from 'ava';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../lib/fake-clock.js';
import { PowerFile, readPowerFile, type PowerState } from '../../simulator/power-file.js';
import { waitFor } from '../helpers/wait.js';

async function folder(t: ExecutionContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-power-file-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

test('the file says on or off, trimmed; missing is on; anything else says nothing', async (t) => {
  const directory = await folder(t);
  const path = join(directory, 'power');
  t.is(await readPowerFile(path), 'on');
  for (const [text, power] of [
    ['off', 'off'],
    [' off\n', 'off'],
    ['on\n', 'on'],
    ['OFF', undefined],
    ['', undefined],
    ['off off', undefined],
  ] as const) {
    await writeFile(path, text);
    t.is(await readPowerFile(path), power, JSON.stringify(text));
  }
});

test('a watched file reports each change once, warns once about nonsense, and keeps the switch', async (t) => {
  const directory = await folder(t);
  const path = join(directory, 'power');
  await writeFile(path, 'off\n');
  const changes: PowerState[] = [];
  const warnings: string[] = [];
  const clock = new FakeClock();
  const power = await PowerFile.watch({
    path,
    clock,
    pollMs: 1_000,
    onChange: (state) => changes.push(state),
    onWarning: (line) => warnings.push(line),
  });
  t.teardown(() => power.close());
  t.is(power.state, 'off', 'read at start, not reported as a change');
  t.deepEqual(changes, []);

  await writeFile(path, 'on\n');
  await waitFor(() => changes.length === 1, 'the watch seeing on');
  await writeFile(path, 'sideways');
  await waitFor(() => warnings.length === 1, 'a warning');
  // Polls read the same nonsense again: no second warning.
  await clock.advanceAsync(3_000, 1_000);
  await writeFile(path, '');
  await clock.advanceAsync(1_000);
  await rm(path);
  await clock.advanceAsync(1_000);
  t.deepEqual(changes, ['on']);
  t.is(warnings.length, 1);
  t.regex(warnings[0] ?? '', /says "sideways", not on or off; the power stays on/);
  await writeFile(path, 'off');
  await waitFor(() => changes.length === 2, 'off again');
  t.deepEqual(changes, ['on', 'off']);
  t.is(power.state, 'off');
});

test('the slow poll finds a change where no watch can see it', async (t) => {
  const directory = await folder(t);
  // Its folder does not exist yet: fs.watch cannot watch it, the poll still reads.
  const path = join(directory, 'later', 'power');
  const changes: PowerState[] = [];
  const clock = new FakeClock();
  const power = await PowerFile.watch({
    path,
    clock,
    pollMs: 5_000,
    onChange: (state) => changes.push(state),
    onWarning: () => undefined,
  });
  t.teardown(() => power.close());
  t.is(power.state, 'on');
  await mkdir(join(directory, 'later'));
  await writeFile(path, 'off');
  await clock.advanceAsync(4_999);
  t.deepEqual(changes, []);
  await clock.advanceAsync(1);
  await waitFor(() => changes.length === 1, 'the poll reading off');
  t.deepEqual(changes, ['off']);
});
