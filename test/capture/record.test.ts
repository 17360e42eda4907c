// lib/capture/record.ts: the 12-byte record header of docs/capture.md,
// byte for byte, its round trip, and the packets that are not records.
import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import {
  CaptureDirection,
  CaptureLink,
  RECORD_HEADER_LENGTH,
  RecordKind,
  decodeRecord,
  encodeRecord,
  mqttMessageData,
  type CaptureRecord,
} from '../../lib/capture/record.js';

test('the header as docs/capture.md lays it out: version, length, link, direction, record, flags, reserved, module id', (t) => {
  const packet = encodeRecord({
    link: CaptureLink.ble,
    direction: CaptureDirection.fromBox,
    kind: RecordKind.chunk,
    moduleId: 0x01020304,
    notAFrame: true,
    data: Buffer.from([0x80, 0xaa]),
  });
  t.is(packet.toString('hex'), '010c0202020300000102030480aa');
  const withoutModule = encodeRecord({
    link: CaptureLink.serial,
    direction: CaptureDirection.toBox,
    kind: RecordKind.wire,
    data: Buffer.from([0]),
  });
  t.is(withoutModule.toString('hex'), '010c0101010000000000000000');
});

const records = fc.record({
  link: fc.constantFrom(...Object.values(CaptureLink)),
  direction: fc.constantFrom(...Object.values(CaptureDirection)),
  kind: fc.constantFrom(...Object.values(RecordKind)),
  moduleId: fc.option(fc.integer({ min: 0, max: 0xffffffff }), { nil: undefined }),
  notAFrame: fc.boolean(),
  data: fc.uint8Array({ maxLength: 300 }),
});

test('every record reads back as it was written', (t) => {
  fc.assert(
    fc.property(records, (record) => {
      const decoded = decodeRecord(encodeRecord(record));
      return decoded !== null && isDeepStrictEqual({ ...decoded, data: new Uint8Array(decoded.data) }, { ...record });
    }),
  );
  t.pass();
});

test('a module id that is no u32 is written as unknown: flag bit 1 clear, the field zero', (t) => {
  for (const moduleId of [-1, 2 ** 32, 1.5, Number.NaN]) {
    const packet = encodeRecord({
      link: CaptureLink.mqtt,
      direction: CaptureDirection.toBox,
      kind: RecordKind.message,
      moduleId,
      data: Buffer.alloc(2),
    });
    t.is(packet[5], 0, String(moduleId));
    t.is(packet.readUInt32BE(8), 0);
    t.is(decodeRecord(packet)?.moduleId, undefined);
  }
});

test('a reader skips a longer header by its length, and refuses what is not a record', (t) => {
  const record: CaptureRecord = {
    link: CaptureLink.serial,
    direction: CaptureDirection.toBox,
    kind: RecordKind.wire,
    moduleId: 9101,
    data: Buffer.from([1, 2, 3]),
  };
  const packet = encodeRecord(record);
  const longer = Buffer.concat([packet.subarray(0, RECORD_HEADER_LENGTH), Buffer.from([9, 9]), packet.subarray(12)]);
  longer[1] = RECORD_HEADER_LENGTH + 2;
  t.deepEqual(decodeRecord(longer)?.data, Buffer.from([1, 2, 3]));
  const changed = (at: number, value: number): Buffer => {
    const copy = Buffer.from(packet);
    copy[at] = value;
    return copy;
  };
  t.is(decodeRecord(packet.subarray(0, RECORD_HEADER_LENGTH - 1)), null, 'too short');
  t.is(decodeRecord(changed(0, 2)), null, 'another version');
  t.is(decodeRecord(changed(1, 11)), null, 'a header shorter than 12');
  t.is(decodeRecord(changed(1, packet.length + 1)), null, 'a header longer than the packet');
  t.is(decodeRecord(changed(2, 4)), null, 'an unknown link');
  t.is(decodeRecord(changed(3, 0)), null, 'an unknown direction');
  t.is(decodeRecord(changed(4, 6)), null, 'an unknown record');
});

test('an MQTT message record: topic length (u16), topic in UTF-8, payload as published', (t) => {
  const data = mqttMessageData('parkbench/boxes/9101/réponse', Buffer.from('{"a":1}'));
  const topicLength = Buffer.byteLength('parkbench/boxes/9101/réponse');
  t.is(data.readUInt16BE(0), topicLength);
  t.is(data.toString('utf8', 2, 2 + topicLength), 'parkbench/boxes/9101/réponse');
  t.is(data.toString('utf8', 2 + topicLength), '{"a":1}');
});
