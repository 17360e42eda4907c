// The gateway's publish queue on disk: an entry is handed out for publishing
// only once it is in the file, and stays there until it is removed (the
// broker's PUBACK), so a gateway killed in between finds it again; the
// commands the gateway took are kept in the same file until settled;
// bounded; one append per batch of changes; a torn last line is skipped.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { DiskPublishQueue, readQueueFile, REMOVAL_WRITE_DELAY_MS } from '../../gateway/disk-queue.js';
import { FakeClock } from '../../lib/fake-clock.js';
import type { QueuedPublish } from '../../lib/resilient-mqtt.js';
import type { TakenCommand } from '../../gateway/command-journal.js';
import { tempDir } from '../helpers/api-app.js';

const response = (n: number): QueuedPublish => ({
  topic: 'parkbench/boxes/9101/response',
  payload: `{"n":${n}}`,
  qos: 1,
  retain: false,
});
const payloads = (queue: DiskPublishQueue): string[] => queue.entries().map((entry) => entry.item.payload);
/** What the file holds, read as a restarted gateway reads it. */
const inFile = readQueueFile;
const command = (keyId: number): TakenCommand => ({
  module_id: 9101,
  via: 'serial',
  command: Buffer.from([1, 2, keyId]).toString('base64'),
  context: { request_id: `r-${keyId}` },
});

test('an entry is handed out for publishing only once the file holds it', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  const { durable } = queue.push(response(1));
  t.is(queue.size, 1);
  t.deepEqual(queue.entries(), [], 'not on disk yet: nothing to publish');
  await durable;
  t.deepEqual(
    (await inFile(path)).publishes.map((item) => item.payload),
    ['{"n":1}'],
  );
  t.deepEqual(payloads(queue), ['{"n":1}']);
});

test('entries stay on disk while they are published, until removed', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  for (const n of [1, 2, 3]) queue.push(response(n));
  await queue.flushed();
  const handedOut = queue.entries();
  t.is(handedOut.length, 3);
  t.is(queue.size, 3, 'reading the entries removes nothing');

  // A restart before any PUBACK would find everything, in order.
  t.deepEqual(
    (await inFile(path)).publishes.map((item) => item.payload),
    ['{"n":1}', '{"n":2}', '{"n":3}'],
  );

  // The PUBACK of the second: only it goes, in memory and on disk.
  queue.remove(handedOut[1]?.id ?? -1);
  queue.remove(handedOut[1]?.id ?? -1); // twice is harmless
  await queue.flushed();
  t.deepEqual(payloads(queue), ['{"n":1}', '{"n":3}']);
  t.deepEqual(
    (await inFile(path)).publishes.map((item) => item.payload),
    ['{"n":1}', '{"n":3}'],
  );

  for (const entry of queue.entries()) queue.remove(entry.id);
  await queue.close();
  t.deepEqual(await inFile(path), { publishes: [], commands: [] });
  t.deepEqual(payloads(await DiskPublishQueue.open(path)), [], 'a restart finds nothing');
});

test('a crash in the middle of an append: the torn last line is skipped, the rest is the queue', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  await queue.push(response(1)).durable;
  await queue.take(command(1)).durable;
  await queue.close();
  appendFileSync(path, '{"op":"push","id":99,"item":{"topic":"parkbench/bo');
  const restarted = await DiskPublishQueue.open(path);
  t.deepEqual(payloads(restarted), ['{"n":1}']);
  t.deepEqual(
    restarted.recovered().map((kept) => kept.command),
    [command(1)],
  );
  // Opened, it is written afresh: the torn line is gone.
  t.false(readFileSync(path, 'utf8').includes('"id":99'));
  await restarted.close();
});

test('bounded: past the limit the oldest goes, counted, on disk too', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path, 2);
  t.false(queue.push(response(1)).dropped);
  t.false(queue.push(response(2)).dropped);
  t.true(queue.push(response(3)).dropped);
  t.is(queue.overflows, 1);
  await queue.flushed();
  t.deepEqual(payloads(await DiskPublishQueue.open(path, 2)), ['{"n":2}', '{"n":3}']);
  t.deepEqual(payloads(await DiskPublishQueue.open(path, 1)), ['{"n":3}'], 'a smaller limit keeps the newest');
});

test('changes that come together, or while a write runs, share one write', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  const written = Array.from({ length: 500 }, (_, n) => queue.push(response(n)).durable);
  await Promise.all(written);
  t.is(queue.writes, 1, '500 responses of one turn: one write');
  // Removals (PUBACKs) and new commands while a write runs: they ride on the next one.
  for (const entry of queue.entries().slice(0, 200)) queue.remove(entry.id);
  const running = queue.flushed();
  for (let keyId = 0; keyId < 50; keyId++) queue.take(command(keyId));
  for (const entry of queue.entries().slice(0, 100)) queue.remove(entry.id);
  await running;
  await queue.flushed();
  t.is((await inFile(path)).publishes.length, 200);
  t.is((await inFile(path)).commands.length, 50);
  t.true(queue.writes <= 3, `${queue.writes} writes for 850 changes`);
  t.is(queue.writeErrors, 0);
});

test('a removal (a PUBACK) rides on the next write, or gets its own a moment later', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const clock = new FakeClock(0);
  const queue = await DiskPublishQueue.open(path, 10_000, { clock });
  await queue.push(response(1)).durable;
  await queue.push(response(2)).durable;
  const [first, second] = queue.entries();
  const writes = queue.writes;

  // The PUBACK of the first, then a new command at once: one write holds both.
  queue.remove(first?.id ?? -1);
  await queue.take(command(1)).durable;
  t.is(queue.writes, writes + 1);
  t.deepEqual(await inFile(path), { publishes: [response(2)], commands: [command(1)] });

  // A PUBACK with nothing after it: written REMOVAL_WRITE_DELAY_MS later.
  queue.remove(second?.id ?? -1);
  clock.advance(REMOVAL_WRITE_DELAY_MS - 1);
  await Promise.resolve();
  t.is(queue.writes, writes + 1, 'not yet');
  clock.advance(1);
  await queue.flushed();
  t.is(queue.writes, writes + 2);
  t.deepEqual((await inFile(path)).publishes, []);
});

test('a command is kept until settled, settled in the write that holds its response; a restart finds the others', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  const first = queue.take(command(1));
  const second = queue.take(command(2));
  await first.durable;
  await second.durable;
  t.deepEqual((await inFile(path)).commands, [command(1), command(2)]);
  t.deepEqual(queue.recovered(), [], 'taken in this run: nothing to recover');

  // The answer to the first: its record queued and the command settled in one turn, one write.
  const writes = queue.writes;
  const { durable } = queue.push(response(1));
  queue.settle(first.id);
  await durable;
  t.is(queue.writes, writes + 1);
  t.deepEqual(await inFile(path), { publishes: [response(1)], commands: [command(2)] });

  // A restart: the second is recovered, until settled.
  const restarted = await DiskPublishQueue.open(path);
  t.deepEqual(
    restarted.recovered().map((kept) => kept.command),
    [command(2)],
  );
  restarted.settle(restarted.recovered()[0]?.id ?? -1);
  t.deepEqual(restarted.recovered(), []);
  await restarted.flushed();
  t.deepEqual((await inFile(path)).commands, []);
});

test('a queue file of an older gateway (a bare array of publishes) is read', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  writeFileSync(path, JSON.stringify([response(1), { not: 'a publish' }, response(2)]));
  const queue = await DiskPublishQueue.open(path);
  t.deepEqual(payloads(queue), ['{"n":1}', '{"n":2}']);
  t.deepEqual(queue.recovered(), []);
});

test('its folder is made at open, so the first write does not fail', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'data', 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  queue.push(response(1));
  await queue.flushed();
  t.is(queue.writeErrors, 0, queue.lastWriteError);
  t.deepEqual(payloads(await DiskPublishQueue.open(path)), ['{"n":1}']);
});

test('a file that is not a queue is refused at open', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  writeFileSync(path, '{not json');
  await t.throwsAsync(DiskPublishQueue.open(path), { message: /not a publish queue/ });
  writeFileSync(path, '{"publishes": []}\n');
  await t.throwsAsync(DiskPublishQueue.open(path), { message: /not a publish queue/ });
  writeFileSync(path, `${JSON.stringify({ parkbench_gateway_queue: 1 })}\nnot json\n{"op":"settle","id":1}\n`);
  await t.throwsAsync(DiskPublishQueue.open(path), { message: /not a publish queue \(line 2/ });
});
