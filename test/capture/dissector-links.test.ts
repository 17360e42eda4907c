// tools/wireshark/parkbench.lua, run by tshark over a capture written with
// lib/capture: the record header of every packet (against the test's own
// pcapng reader), serial runs with their COBS, CRC and link type and the
// runs that make no frame, BLE chunks at MTU 23 and the frame they make,
// MQTT messages with their topic and JSON.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { crc16, cobsDecode } from '../../firmware-protocol/index.js';
import { readCapture } from '../helpers/pcapng.js';
import { testNeeding } from '../helpers/requires.js';
import { writeSampleCapture } from '../helpers/sample-capture.js';
import { dissect, framesMatching, isTrue } from '../helpers/tshark.js';

const withTshark = testNeeding('tshark', test);
const folder = mkdtempSync(join(tmpdir(), 'pb-dissector-links-'));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));
const sample = writeSampleCapture(join(folder, 'sample.pcapng'));
const named = (name: string): number => {
  const frame = sample.named.get(name);
  if (frame === undefined) throw new Error(`the sample has no frame named ${name}`);
  return frame;
};

withTshark('the record header of every packet, as the pcapng reader of the tests reads it', async (t) => {
  const fields = [
    'parkbench.record_version',
    'parkbench.header_length',
    'parkbench.link',
    'parkbench.direction',
    'parkbench.record',
    'parkbench.flags.not_a_frame',
    'parkbench.flags.module_id_known',
  ];
  const packets = await dissect(sample.path, fields);
  const written = readCapture(sample.path).packets;
  t.is(packets.length, written.length);
  t.is(packets.length, sample.packets);
  for (const [index, packet] of packets.entries()) {
    const record = written[index]?.record;
    if (record === undefined || record === null) return t.fail(`packet ${packet.frame} is no record`);
    const { fields: found } = packet;
    t.deepEqual(
      [found['parkbench.record_version'], found['parkbench.header_length']],
      [['1'], ['12']],
      `frame ${packet.frame}`,
    );
    t.deepEqual(
      [found['parkbench.link'], found['parkbench.direction'], found['parkbench.record']],
      [[String(record.link)], [String(record.direction)], [String(record.kind)]],
      `frame ${packet.frame}`,
    );
    t.is(isTrue(found['parkbench.flags.not_a_frame']?.[0]), record.notAFrame, `frame ${packet.frame}`);
    t.is(isTrue(found['parkbench.flags.module_id_known']?.[0]), record.moduleId !== undefined);
  }
  t.deepEqual(await framesMatching(sample.path, 'parkbench.link == 2 && parkbench.direction == 2'), [
    ...sample.chunks.filter((chunk) => chunk.direction === 2).map((chunk) => chunk.frame),
    ...sample.responses.filter((response) => response.link === 'ble').map((response) => response.frame),
    ...sample.opened.filter((opened) => opened.link === 'ble' && opened.direction === 2).map((opened) => opened.frame),
  ]);
});

withTshark('serial runs: COBS decoded, CRC checked, the link type named, the frame inside', async (t) => {
  const fields = ['parkbench.encoded', 'parkbench.delimiter', 'parkbench.link_type', 'parkbench.crc'];
  const packets = await dissect(sample.path, fields, { filter: 'parkbench.crc_ok == 1 && !parkbench.not_a_frame' });
  const made = sample.runs.filter((run) => run.frameMade);
  t.deepEqual(
    packets.map((packet) => packet.frame),
    made.map((run) => run.frame),
  );
  for (const [index, packet] of packets.entries()) {
    const run = made[index];
    if (run === undefined) return t.fail(`no run for frame ${packet.frame}`);
    const encoded = run.bytes.subarray(0, -1);
    const raw = cobsDecode(encoded);
    if (raw === null) return t.fail(`run of frame ${packet.frame} is no COBS`);
    t.deepEqual(packet.fields, {
      'parkbench.encoded': [encoded.toString('hex')],
      'parkbench.delimiter': ['0x00'],
      'parkbench.link_type': [`0x${raw.toString('hex', 0, 1)}`],
      'parkbench.crc': [`0x${raw.toString('hex', raw.length - 2)}`],
    });
  }
  t.deepEqual(
    (await dissect(sample.path, ['parkbench.link_type'], { filter: 'parkbench.crc_ok == 1' })).map(
      (packet) => packet.fields['parkbench.link_type']?.[0],
    ),
    ['0x02', '0x82', '0x01', '0x81', '0x01', '0x81', '0x03'],
    'status request and report, two commands and their responses, an undefined type with a good CRC',
  );
  t.deepEqual(await framesMatching(sample.path, 'parkbench.link == 1 && parkbench.command'), [
    named('serial ACCESS command'),
    named('serial forged ACCESS command'),
  ]);
});

withTshark('serial runs that make no frame: shown as such, each with why', async (t) => {
  const notAFrame = sample.runs.filter((run) => !run.frameMade).map((run) => run.frame);
  t.deepEqual(await framesMatching(sample.path, 'parkbench.not_a_frame'), notAFrame);
  t.deepEqual(await framesMatching(sample.path, 'parkbench.flags.not_a_frame == 1'), notAFrame);
  const reasons = new Map(
    (await dissect(sample.path, ['parkbench.not_a_frame'], { filter: 'parkbench.not_a_frame' })).map((packet) => [
      packet.frame,
      [packet.info, ...(packet.fields['parkbench.not_a_frame'] ?? [])],
    ]),
  );
  t.deepEqual(reasons.get(named('bad CRC')), ['→ box 9101 not a frame (bad CRC)', 'bad CRC']);
  t.deepEqual(reasons.get(named('bad COBS')), ['→ box 9101 not a frame (bad COBS)', 'bad COBS']);
  t.deepEqual(reasons.get(named('undefined link type')), [
    '→ box 9101 not a frame (undefined link type 0x03)',
    'undefined link type 0x03',
  ]);
  t.deepEqual(reasons.get(named('oversize first piece')), [
    '← box 9101 not a frame (too long, no delimiter)',
    'too long, no delimiter',
  ]);
  t.deepEqual(reasons.get(named('oversize rest')), [
    '← box 9101 not a frame (too long (476 encoded bytes, at most 229))',
    'too long (476 encoded bytes, at most 229)',
  ]);
  t.deepEqual(reasons.get(named('lone delimiter')), ['← box 9101 not a frame (lone delimiter)', 'lone delimiter']);
  t.deepEqual(reasons.get(named('cut run')), ['← box 9101 not a frame (no delimiter)', 'no delimiter']);
  t.is(reasons.size, notAFrame.length);

  // The bad CRC: the one in the frame, and the one it should have been.
  t.deepEqual(await framesMatching(sample.path, 'parkbench.crc_ok == 0'), [named('bad CRC')]);
  t.deepEqual(await framesMatching(sample.path, 'parkbench.bad_crc'), [named('bad CRC')]);
  t.deepEqual(await framesMatching(sample.path, 'parkbench.bad_cobs'), [named('bad COBS')]);
  const [bad] = await dissect(sample.path, ['parkbench.crc', 'parkbench.crc.computed'], {
    filter: 'parkbench.crc_ok == 0',
  });
  const run = sample.runs.find((each) => each.frame === named('bad CRC'));
  const raw = run === undefined ? null : cobsDecode(run.bytes.subarray(0, -1));
  if (raw === null) return t.fail('the bad CRC run is COBS');
  const right = crc16(raw, 0, raw.length - 2);
  t.deepEqual(bad?.fields, {
    'parkbench.crc': [`0x${(right ^ 1).toString(16).padStart(4, '0')}`],
    'parkbench.crc.computed': [`0x${right.toString(16).padStart(4, '0')}`],
  });
});

withTshark(
  'BLE chunks at MTU 23: header byte, counter and last bit; their data is the frame recorded after them',
  async (t) => {
    const fields = [
      'parkbench.chunk.header',
      'parkbench.chunk.counter',
      'parkbench.chunk.last',
      'parkbench.chunk.data',
    ];
    const packets = await dissect(sample.path, fields, { filter: 'parkbench.chunk' });
    t.deepEqual(
      packets.map((packet) => packet.frame),
      sample.chunks.map((chunk) => chunk.frame),
    );
    const toBox = packets.slice(0, 12);
    t.is(sample.chunks.filter((chunk) => chunk.direction === 1).length, 12, 'the longest frame takes 12 chunks');
    t.deepEqual(
      toBox.map((packet) => [
        packet.fields['parkbench.chunk.counter']?.[0],
        isTrue(packet.fields['parkbench.chunk.last']?.[0]),
      ]),
      Array.from({ length: 12 }, (_, counter) => [String(counter), counter === 11]),
    );
    for (const [index, packet] of packets.entries()) {
      const chunk = sample.chunks[index];
      t.deepEqual(packet.fields['parkbench.chunk.header'], [`0x${chunk?.bytes.toString('hex', 0, 1) ?? ''}`]);
      t.deepEqual(packet.fields['parkbench.chunk.data'], [chunk?.bytes.toString('hex', 1) ?? '']);
    }
    const signed = sample.commands.find((command) => command.link === 'ble');
    const answer = sample.responses.find((response) => response.link === 'ble');
    const data = (from: number, to: number): string =>
      packets
        .slice(from, to)
        .map((packet) => packet.fields['parkbench.chunk.data']?.[0] ?? '')
        .join('');
    if (signed === undefined || answer === undefined) return t.fail('the sample has a BLE exchange');
    t.is(data(0, 12), signed.bytes.toString('hex'));
    t.is(data(12, 14), answer.bytes.toString('hex'));
    t.is(signed.frame, (packets[11]?.frame ?? 0) + 1, 'the frame follows its last chunk');
    t.is(packets[0]?.info, '→ box 9101 chunk 0, 19 bytes');
    t.is(packets[11]?.info, '→ box 9101 chunk 11 last, 16 bytes');
  },
);

withTshark("MQTT messages: the topic, and the payload handed to Wireshark's JSON dissector", async (t) => {
  const fields = ['parkbench.topic_length', 'parkbench.topic', 'json.key', 'json.value.string'];
  const packets = await dissect(sample.path, fields, { filter: 'parkbench.message' });
  t.deepEqual(
    packets.map((packet) => packet.frame),
    sample.messages.map((message) => message.frame),
  );
  for (const [index, packet] of packets.entries()) {
    const message = sample.messages[index];
    if (message === undefined) return t.fail(`no message for frame ${packet.frame}`);
    const json = JSON.parse(message.payload) as Record<string, unknown>;
    t.deepEqual(packet.fields['parkbench.topic'], [message.topic]);
    t.deepEqual(packet.fields['parkbench.topic_length'], [String(Buffer.byteLength(message.topic))]);
    t.deepEqual(
      packet.fields['json.key']?.filter((key) => key in json),
      Object.keys(json),
    );
    t.true(packet.fields['json.value.string']?.includes(String(json['command'])), `frame ${packet.frame}`);
    t.is(
      packet.info,
      `${message.direction === 1 ? '→' : '←'} box 9101 MQTT ${message.topic}, ${Buffer.byteLength(message.payload)} bytes`,
    );
  }
  t.deepEqual(await framesMatching(sample.path, 'parkbench.topic contains "/response" && json'), [
    ...sample.messages.filter((message) => message.direction === 2).map((message) => message.frame),
  ]);
});
