import test from 'ava';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkReplaceable, prepareFileAtomic, UnsafeTargetError, writeFileAtomic } from '../../lib/atomic-file.js';

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

test('a folder where the file should go: refused, its content kept, no temporary left', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const target = join(directory, 'state.json');
  await mkdir(target);
  await writeFile(join(target, 'keep'), 'old');
  await t.throwsAsync(writeFileAtomic(target, 'new'));
  t.is(await readFile(join(target, 'keep'), 'utf8'), 'old');
  t.deepEqual(await readdir(directory), ['state.json']);
});

test('only a regular file or a new name is replaced: a symbolic link (not followed), a folder, a FIFO, a socket or a device is refused, nothing written', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const victim = join(directory, 'victim');
  await writeFile(victim, 'keep');
  const link = join(directory, 'link');
  await symlink(victim, link);
  const folder = join(directory, 'folder');
  await mkdir(folder);
  const fifo = join(directory, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const socket = join(directory, 'socket');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  for (const [path, what] of [
    [link, 'a symbolic link'],
    [folder, 'a directory'],
    [fifo, 'a FIFO'],
    [socket, 'a socket'],
  ] as const) {
    const error = await t.throwsAsync(writeFileAtomic(path, 'new'), { instanceOf: UnsafeTargetError });
    t.is(error.message, `${path} is ${what}: refused, only a regular file or a new name is written`);
    t.throws(() => checkReplaceable(path), { instanceOf: UnsafeTargetError });
  }
  t.is(await readFile(victim, 'utf8'), 'keep', 'the link was not followed');
  t.true((await lstat(link)).isSymbolicLink());
  t.deepEqual((await readdir(directory)).sort(), ['fifo', 'folder', 'link', 'socket', 'victim']);
  // A device is only looked at here (lstat): /dev/null is never written.
  t.throws(() => checkReplaceable('/dev/null'), {
    instanceOf: UnsafeTargetError,
    message: '/dev/null is a character device: refused, only a regular file or a new name is written',
  });
  t.notThrows(() => checkReplaceable(join(directory, 'new-name')));
  t.notThrows(() => checkReplaceable(victim));
});

test('a prepared file is checked again when it is put in place: a link made in between is refused and the temporary removed', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const path = join(directory, 'out.json');
  const victim = join(directory, 'victim');
  await writeFile(victim, 'keep');
  const prepared = await prepareFileAtomic(path, 'new');
  await symlink(victim, path);
  t.throws(() => prepared.commitSync(), { instanceOf: UnsafeTargetError });
  prepared.discard();
  t.is(await readFile(victim, 'utf8'), 'keep');
  t.deepEqual((await readdir(directory)).sort(), ['out.json', 'victim']);
});
