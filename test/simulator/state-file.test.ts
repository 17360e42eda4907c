import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoxStateFile, StateFileError } from '../../simulator/state-file.js';
import { initialBoxState } from '../../firmware-protocol/box.js';

async function temporaryDirectory(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-state-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

test('a new box starts from box_seq 0 with no tries', async (t) => {
  const file = new BoxStateFile(join(await temporaryDirectory(t), 'box.json'));
  const state = await file.load();
  t.is(state.boxSeq, 0);
  t.is(state.lastControlSeq, 0);
  t.is(state.tries.size, 0);
});

test('what was saved is what a restarted box loads', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  await new BoxStateFile(path).save({ ...initialBoxState(), boxSeq: 41, lastControlSeq: 7, tries: new Map([[42, { count: 2, notAfter: 1_800_000_000 }]]) });
  const state = await new BoxStateFile(path).load();
  t.is(state.boxSeq, 41);
  t.is(state.lastControlSeq, 7);
  t.deepEqual([...state.tries], [[42, { count: 2, notAfter: 1_800_000_000 }]]);
});

test('saves land in the order they were asked for', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  const file = new BoxStateFile(path);
  await Promise.all(Array.from({ length: 25 }, (_, index) => file.save({ ...initialBoxState(), boxSeq: index })));
  t.is((await file.load()).boxSeq, 24);
});

test('a corrupt state file is refused with its path, not taken as a new box', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  await writeFile(path, '{"version":1,"box_seq":-1,"last_control_seq":0,"tries":[]}');
  await t.throwsAsync(new BoxStateFile(path).load(), { instanceOf: StateFileError, message: /box\.json: not a box state file/ });
  await writeFile(path, '{"version":1,');
  await t.throwsAsync(new BoxStateFile(path).load(), { instanceOf: StateFileError, message: /not valid JSON/ });
});
