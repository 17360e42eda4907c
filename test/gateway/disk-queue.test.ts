// The gateway's publish queue on disk: an entry is handed out for publishing
// only once it is in the file, and stays there until it is removed (the
// broker's PUBACK), so a gateway killed in between finds it again; the
// commands the gateway took are kept in the same file until settled;
// bounded; one write per batch of changes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { DiskPublishQueue, REMOVAL_WRITE_DELAY_MS } from '../../gateway/disk-queue.js';
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
const inFile = (path: string): { publishes: QueuedPublish[]; commands: TakenCommand[] } =>
  JSON.parse(readFileSync(path, 'utf8')) as { publishes: QueuedPublish[]; commands: TakenCommand[] };
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
    inFile(path).publishes.map((item) => item.payload),
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

  // A restart before any PUBACK: everything is still there, in order.
  const restarted = await DiskPublishQueue.open(path);
  t.deepEqual(payloads(restarted), ['{"n":1}', '{"n":2}', '{"n":3}']);

  // The PUBACK of the second: only it goes, in memory and on disk.
  queue.remove(handedOut[1]?.id ?? -1);
  queue.remove(handedOut[1]?.id ?? -1); // twice is harmless
  await queue.flushed();
  t.deepEqual(payloads(queue), ['{"n":1}', '{"n":3}']);
  t.deepEqual(payloads(await DiskPublishQueue.open(path)), ['{"n":1}', '{"n":3}']);

  for (const entry of queue.entries()) queue.remove(entry.id);
  await queue.flushed();
  t.deepEqual(inFile(path), { publishes: [], commands: [] });
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
  t.is(inFile(path).publishes.length, 200);
  t.is(inFile(path).commands.length, 50);
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
  t.deepEqual(inFile(path), { publishes: [response(2)], commands: [command(1)] });

  // A PUBACK with nothing after it: written REMOVAL_WRITE_DELAY_MS later.
  queue.remove(second?.id ?? -1);
  clock.advance(REMOVAL_WRITE_DELAY_MS - 1);
  await Promise.resolve();
  t.is(queue.writes, writes + 1, 'not yet');
  clock.advance(1);
  await queue.flushed();
  t.is(queue.writes, writes + 2);
  t.deepEqual(inFile(path).publishes, []);
});

test('a command is kept until settled, settled in the write that holds its response; a restart finds the others', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  const first = queue.take(command(1));
  const second = queue.take(command(2));
  await first.durable;
  await second.durable;
  t.deepEqual(inFile(path).commands, [command(1), command(2)]);
  t.deepEqual(queue.recovered(), [], 'taken in this run: nothing to recover');

  // The answer to the first: its record queued and the command settled in one turn, one write.
  const writes = queue.writes;
  const { durable } = queue.push(response(1));
  queue.settle(first.id);
  await durable;
  t.is(queue.writes, writes + 1);
  t.deepEqual(inFile(path), { publishes: [response(1)], commands: [command(2)] });

  // A restart: the second is recovered, until settled.
  const restarted = await DiskPublishQueue.open(path);
  t.deepEqual(
    restarted.recovered().map((kept) => kept.command),
    [command(2)],
  );
  restarted.settle(restarted.recovered()[0]?.id ?? -1);
  t.deepEqual(restarted.recovered(), []);
  await restarted.flushed();
  t.deepEqual(inFile(path).commands, []);
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
  writeFileSync(path, '{"publishes": []}');
  await t.throwsAsync(DiskPublishQueue.open(path), { message: /not a publish queue/ });
});
