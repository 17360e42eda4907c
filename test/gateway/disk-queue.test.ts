// The gateway's publish queue on disk (issue 12, item 7): an entry handed out
// for publishing stays in the file until it is removed (the broker's PUBACK),
// so a gateway killed in between finds it again; bounded; one write per batch.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { DiskPublishQueue } from '../../gateway/disk-queue.js';
import type { QueuedPublish } from '../../lib/resilient-mqtt.js';
import { tempDir } from '../helpers/api-app.js';

const response = (n: number): QueuedPublish => ({
  topic: 'parkbench/boxes/9101/response',
  payload: `{"n":${n}}`,
  qos: 1,
  retain: false,
});
const payloads = (queue: DiskPublishQueue): string[] => queue.entries().map((entry) => entry.item.payload);

test('entries stay on disk while they are published, until removed', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  for (const n of [1, 2, 3]) queue.push(response(n));
  const handedOut = queue.entries();
  t.is(handedOut.length, 3);
  t.is(queue.size, 3, 'reading the entries removes nothing');
  await queue.flushed();

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
  t.deepEqual(JSON.parse(readFileSync(path, 'utf8')), []);
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

test('changes made while a write runs share the next write', async (t) => {
  const path = join(tempDir(t, 'parkbench-queue-'), 'queue.json');
  const queue = await DiskPublishQueue.open(path);
  for (let n = 0; n < 500; n++) queue.push(response(n));
  for (const entry of queue.entries().slice(0, 200)) queue.remove(entry.id);
  await queue.flushed();
  t.is((JSON.parse(readFileSync(path, 'utf8')) as unknown[]).length, 300);
  t.true(queue.writes <= 2, `${queue.writes} writes for 700 changes`);
  t.is(queue.writeErrors, 0);
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
});
