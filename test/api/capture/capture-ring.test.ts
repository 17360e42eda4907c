// The capture ring alone (api/capture/capture-ring.ts): what it keeps of many
// boxes within its byte bound and its age, read back as pcapng by
// test/helpers/pcapng.ts.
import test from 'ava';
import { CaptureRing, MqttCapture } from '../../../api/capture/index.js';
import { LinkCapture } from '../../../lib/capture/link-capture.js';
import { CaptureDirection, RecordKind } from '../../../lib/capture/record.js';
import { parseResponseMessage } from '../../../lib/mqtt-messages.js';
import { readCapture } from '../../helpers/pcapng.js';

const SECOND = 1_000_000;

/** A ring on a clock the test moves, and a link recording into it. */
function ringOf(options: { maxBytes: number; maxAgeSeconds?: number }) {
  let now = 1_767_225_600 * SECOND;
  const ring = new CaptureRing({
    maxAgeMicros: (options.maxAgeSeconds ?? 300) * SECOND,
    maxBytes: options.maxBytes,
    nowMicros: () => now,
  });
  const link = new LinkCapture(ring, 'mqtt', 'mqtt://127.0.0.1:1883', { nowMicros: () => BigInt(ring.nowMicros()) });
  return {
    ring,
    link,
    advance: (micros: number) => {
      now += micros;
    },
  };
}

/** The sequence numbers a box's capture holds (each record's data is one). */
function numbersOf(ring: CaptureRing, moduleId: number, sinceMicros?: number): number[] {
  return readCapture(ring.capture(moduleId, 'parkbench test api', sinceMicros)).packets.map(({ record }) =>
    Buffer.from(record?.data ?? []).readUInt32BE(0),
  );
}

function frame(sequence: number): Buffer {
  const data = Buffer.alloc(40);
  data.writeUInt32BE(sequence, 0);
  return data;
}

test('the byte bound gives back the oldest records first, over every box; each box keeps its newest, in order', (t) => {
  const maxBytes = 64 * 1024;
  const { ring, link, advance } = ringOf({ maxBytes });
  const boxes = 500;
  let sequence = 0;
  for (let round = 0; round < 20; round++) {
    for (let moduleId = 1; moduleId <= boxes; moduleId++) {
      link.frame(CaptureDirection.fromBox, frame(sequence++), moduleId);
      advance(1_000);
    }
    t.true(ring.heldBytes <= maxBytes, `round ${round}: ${ring.heldBytes} bytes held`);
  }
  // 10,000 records of 78 bytes do not fit in 64 KiB: the ring holds the newest.
  t.true(ring.records < sequence);
  t.true(ring.records > (maxBytes * 0.8) / 78, `${ring.records} records held`);
  const kept = new Map<number, number[]>();
  for (let moduleId = 1; moduleId <= boxes; moduleId++) kept.set(moduleId, numbersOf(ring, moduleId));
  const all = [...kept.values()].flat().sort((a, b) => a - b);
  t.is(all.length, ring.records);
  // What is kept is one run of the newest records, whichever box they are of.
  t.deepEqual(
    all,
    Array.from({ length: all.length }, (_, i) => sequence - all.length + i),
  );
  for (const [moduleId, numbers] of kept) {
    t.deepEqual(
      numbers,
      numbers.map((_, i) => (numbers[0] ?? 0) + i * boxes),
      `box ${moduleId}: its records in order, none missing between`,
    );
  }
  t.deepEqual(numbersOf(ring, boxes + 1), []);
});

test('records older than the ring keeps are not served, and their slabs are given back', (t) => {
  const { ring, link, advance } = ringOf({ maxBytes: 1024 * 1024, maxAgeSeconds: 10 });
  for (let second = 0; second < 30; second++) {
    for (let moduleId = 1; moduleId <= 100; moduleId++) link.frame(CaptureDirection.toBox, frame(second), moduleId);
    advance(SECOND);
  }
  // Now is 30 s after the first: records of seconds 20..29 are at most 10 s old.
  t.deepEqual(numbersOf(ring, 7), [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  t.deepEqual(numbersOf(ring, 7, ring.nowMicros() - 3 * SECOND), [27, 28, 29]);
  const held = ring.heldBytes;
  // 30 s of 100 boxes is 234 KiB of entries: the slabs of seconds 0..19 went back.
  t.true(held < 30 * 100 * 78, `${held} bytes held`);
  advance(11 * SECOND);
  t.deepEqual(numbersOf(ring, 7), []);
  t.is(ring.heldBytes, 0);
  t.is(ring.records, 0);
});

test('a record without a module id, or larger than the whole ring, is counted and not kept', (t) => {
  const { ring, link } = ringOf({ maxBytes: 4096 });
  link.frame(CaptureDirection.toBox, frame(1));
  link.frame(CaptureDirection.toBox, Buffer.alloc(5000), 9);
  link.message(CaptureDirection.toBox, 'parkbench/boxes/9/command', Buffer.from('{}'), 9);
  t.is(ring.dropped, 2);
  const packets = readCapture(ring.capture(9, 'parkbench test api')).packets;
  t.deepEqual(
    packets.map(({ record }) => [record?.kind, record?.moduleId]),
    [[RecordKind.message, 9]],
  );
});

test('timestamps never go back: a clock stepped back stamps the next record with the last time', (t) => {
  let now = 5_000 * SECOND;
  const ring = new CaptureRing({ maxAgeMicros: 300 * SECOND, maxBytes: 65_536, nowMicros: () => now });
  const link = new LinkCapture(ring, 'mqtt', 'broker', { nowMicros: () => BigInt(now) });
  link.frame(CaptureDirection.toBox, frame(1), 1);
  now -= 2 * SECOND;
  link.frame(CaptureDirection.fromBox, frame(2), 1);
  const stamps = readCapture(ring.capture(1, 'x')).packets.map(({ timestampMicros }) => timestampMicros);
  t.deepEqual(stamps, [5_000n * 1_000_000n, 5_000n * 1_000_000n]);
});

test('MqttCapture: the interface names the broker without its credentials; a response message without a frame (none given, or one that does not parse) is recorded alone', (t) => {
  const { ring } = ringOf({ maxBytes: 65_536 });
  const capture = new MqttCapture(ring, 'mqtts://api:s3cret@broker.example:8883');
  const topic = 'parkbench/boxes/9/response';
  const answered = { command: 'AQID', response: 'BAUG', received_at: '2026-01-01T00:00:00Z', via: 'mqtt', context: {} };
  const timedOut = { ...answered, response: null, error: 'timeout' };
  capture.response(9, topic, Buffer.from(JSON.stringify(answered)), parseResponseMessage(JSON.stringify(answered)));
  capture.response(9, topic, Buffer.from(JSON.stringify(timedOut)), parseResponseMessage(JSON.stringify(timedOut)));
  capture.response(9, topic, Buffer.from('not json'), undefined);
  capture.command(9, 'parkbench/boxes/9/command', '{"command":"AQID"}', Buffer.from([1, 2, 3]));
  const contents = readCapture(ring.capture(9, 'parkbench test api'));
  t.deepEqual(
    contents.interfaces.map(({ name }) => name),
    ['mqtt:mqtts://broker.example:8883'],
  );
  t.deepEqual(
    contents.packets.map(({ record }) => [record?.direction, record?.kind]),
    [
      [CaptureDirection.fromBox, RecordKind.message],
      [CaptureDirection.fromBox, RecordKind.frame],
      [CaptureDirection.fromBox, RecordKind.message],
      [CaptureDirection.fromBox, RecordKind.message],
      [CaptureDirection.toBox, RecordKind.message],
      [CaptureDirection.toBox, RecordKind.frame],
    ],
  );
  t.deepEqual(Buffer.from(contents.packets[1]?.record?.data ?? []), Buffer.from([4, 5, 6]));
  const last = Buffer.from(contents.packets[4]?.record?.data ?? []);
  t.is(last.readUInt16BE(0), 'parkbench/boxes/9/command'.length);
  t.is(last.subarray(2).toString(), 'parkbench/boxes/9/command{"command":"AQID"}');
});
