import test from 'ava';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../lib/atomic-file.js';

test('replaces the file whole and leaves no temporary behind', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const path = join(directory, 'state.json');
  await writeFileAtomic(path, '{"a":1}');
  await writeFileAtomic(path, '{"a":2}');
  t.is(await readFile(path, 'utf8'), '{"a":2}');
  t.deepEqual(await readdir(directory), ['state.json']);
  t.is((await stat(path)).mode & 0o777, 0o600);
});

test('concurrent writers never leave a torn file', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const path = join(directory, 'state.json');
  const contents = Array.from({ length: 20 }, (_, index) => JSON.stringify({ index, pad: 'x'.repeat(10_000 + index) }));
  await Promise.all(contents.map((content) => writeFileAtomic(path, content)));
  t.true(contents.includes(await readFile(path, 'utf8')));
  t.deepEqual(await readdir(directory), ['state.json']);
});

test('a failed rename leaves the old content and removes its temporary', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  // A non-empty directory where the file should go: the data is written and
  // flushed, then the rename over it fails.
  const target = join(directory, 'state.json');
  await mkdir(target);
  await writeFile(join(target, 'keep'), 'old');
  await t.throwsAsync(writeFileAtomic(target, 'new'));
  t.is(await readFile(join(target, 'keep'), 'utf8'), 'old');
  t.deepEqual(await readdir(directory), ['state.json']);
});
