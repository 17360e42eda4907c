// Serial link framing (docs/protocol.md, Serial link framing; sizes): CRC-16,
// COBS, link frames, and the streaming decoder with the herdsman parser
// checklist.
import test from 'ava';
import {
  LinkFrameDecoder,
  LinkType,
  ProtocolError,
  cobsDecode,
  cobsEncode,
  crc16,
  decodeLinkFrame,
  encodeLinkFrame,
  sealResponse,
  statusReport,
} from '../../firmware-protocol/index.js';
import { access, boxKey, conditions, config, signedAccess, state } from '../helpers/protocol-fixtures.js';

test('CRC-16/CCITT-FALSE check value: "123456789" gives 0x29B1', (t) => {
  t.is(crc16(Buffer.from('123456789', 'ascii')), 0x29b1);
  t.is(crc16(Buffer.alloc(0)), 0xffff);
});

test('COBS: known encodings (zeros, a 254-byte run, a 255-byte run)', (t) => {
  const cases: [string, string][] = [
    ['', '01'],
    ['00', '0101'],
    ['0000', '010101'],
    ['11220033', '03112202 33'.replace(' ', '')],
    ['112233', '04112233'],
  ];
  for (const [raw, encoded] of cases) {
    t.is(cobsEncode(Buffer.from(raw, 'hex')).toString('hex'), encoded, raw);
    t.is(cobsDecode(Buffer.from(encoded, 'hex'))?.toString('hex'), raw, encoded);
  }
  const run254 = Buffer.alloc(254, 0x07);
  const enc254 = cobsEncode(run254);
  t.is(enc254.length, 256);
  t.is(enc254[0], 0xff);
  t.is(enc254[255], 0x01);
  t.deepEqual(cobsDecode(enc254), run254);
  const run255 = Buffer.alloc(255, 0x07);
  const enc255 = cobsEncode(run255);
  t.is(enc255.length, 257);
  t.deepEqual(cobsDecode(enc255), run255);
  const zeroAfterRun = Buffer.concat([run254, Buffer.from([0, 9])]);
  t.deepEqual(cobsDecode(cobsEncode(zeroAfterRun)), zeroAfterRun);
  for (const encoded of [cobsEncode(run254), cobsEncode(zeroAfterRun), cobsEncode(Buffer.alloc(300))])
    t.false(encoded.includes(0));
});

test('COBS: bad encodings decode to null (code past the end, a zero inside)', (t) => {
  t.is(cobsDecode(Buffer.from('05112233', 'hex')), null);
  t.is(cobsDecode(Buffer.from('0300', 'hex')), null);
  t.is(cobsDecode(Buffer.from('00', 'hex')), null);
});

test('link frame: COBS(type || payload || CRC big-endian) || 00, and back', (t) => {
  const frame = encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0));
  // type 0x02, CRC over [0x02], no zero: one block.
  const crc = crc16(Buffer.from([0x02]));
  t.is(frame.toString('hex'), `0402${crc.toString(16).padStart(4, '0')}00`);
  const payload = sealResponse(statusReport(config, state, conditions).fields, boxKey, null);
  const decoded = decodeLinkFrame(encodeLinkFrame(LinkType.STATUS_REPORT, payload));
  t.is(decoded.type, LinkType.STATUS_REPORT);
  t.deepEqual(decoded.payload, payload);
});

test('link frame: the longest command (ACCESS_SIGNED, 32 modules, 225 bytes) fits in 230 bytes; decodeLinkFrame throws typed errors', (t) => {
  const longest = signedAccess({ body: { moduleIds: Array.from({ length: 32 }, (_, i) => i) } });
  t.is(longest.length, 225);
  const frame = encodeLinkFrame(LinkType.COMMAND, longest);
  t.true(frame.length <= 230);
  t.deepEqual(decodeLinkFrame(frame).payload, longest);
  const bad = Buffer.from(frame);
  bad[5] = (bad[5] ?? 0) ^ 0x40;
  t.throws(() => decodeLinkFrame(bad), { instanceOf: ProtocolError, message: /BAD_CRC|BAD_COBS/ });
  t.throws(() => decodeLinkFrame(Buffer.from('0201', 'hex')), { instanceOf: ProtocolError });
  t.throws(() => encodeLinkFrame(LinkType.COMMAND, Buffer.alloc(227, 1)), {
    instanceOf: ProtocolError,
    message: /exceeds/,
  });
  t.throws(() => encodeLinkFrame(0x03 as 0x01, Buffer.alloc(1)), { instanceOf: ProtocolError });
});

const command = encodeLinkFrame(LinkType.COMMAND, access());
const request = encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0));

test('decoder: a frame split across chunks, byte by byte', (t) => {
  const decoder = new LinkFrameDecoder();
  const out = [];
  for (const byte of command) out.push(...decoder.push(Buffer.from([byte])));
  t.is(out.length, 1);
  t.is(out[0]?.type, LinkType.COMMAND);
  t.is(decoder.counters.frames, 1);
});

test('decoder: two frames in one chunk', (t) => {
  const decoder = new LinkFrameDecoder();
  const out = decoder.push(Buffer.concat([command, request]));
  t.deepEqual(
    out.map((f) => f.type),
    [LinkType.COMMAND, LinkType.STATUS_REQUEST],
  );
});

test('decoder: the CRC (and delimiter) arriving alone', (t) => {
  const decoder = new LinkFrameDecoder();
  t.deepEqual(decoder.push(command.subarray(0, command.length - 3)), []);
  t.deepEqual(decoder.push(command.subarray(command.length - 3, command.length - 1)), []);
  t.is(decoder.push(command.subarray(command.length - 1)).length, 1);
});

test('decoder: junk before a frame is dropped and counted; the frame after the next 0x00 comes through', (t) => {
  const decoder = new LinkFrameDecoder();
  const out = decoder.push(Buffer.concat([Buffer.from('deadbeef00', 'hex'), command]));
  t.is(out.length, 1);
  t.is(decoder.counters.badCrc + decoder.counters.badCobs, 1);
  // Junk glued to a frame with no 0x00 between costs that frame only.
  const glued = new LinkFrameDecoder();
  t.deepEqual(
    glued.push(Buffer.concat([Buffer.from('dead', 'hex'), command, request])).map((f) => f.type),
    [LinkType.STATUS_REQUEST],
  );
  t.is(glued.counters.frames, 1);
});

test('decoder: a bad CRC is dropped and counted, never passed on; the next frame decodes', (t) => {
  const decoder = new LinkFrameDecoder();
  const bad = Buffer.from(command);
  bad[10] = bad[10] === 0x01 ? 0x02 : 0x01;
  const out = decoder.push(Buffer.concat([bad, request]));
  t.deepEqual(
    out.map((f) => f.type),
    [LinkType.STATUS_REQUEST],
  );
  t.is(decoder.counters.badCrc + decoder.counters.badCobs, 1);
});

test('decoder: trailing bytes wait for their delimiter; empty runs are idle line', (t) => {
  const decoder = new LinkFrameDecoder();
  t.is(decoder.push(Buffer.concat([request, command.subarray(0, 7)])).length, 1);
  t.is(decoder.pending, 7);
  t.is(decoder.push(Buffer.from([0, 0, 0])).length, 0);
  t.is(
    decoder.counters.badCrc + decoder.counters.badCobs,
    1,
    'the 7 trailing bytes, cut by a 0x00, count as one bad frame',
  );
  t.is(decoder.pending, 0);
});

test('decoder: an oversize run is counted once, memory stays bounded, and it resynchronizes at the next 0x00', (t) => {
  const decoder = new LinkFrameDecoder();
  for (let i = 0; i < 100; i++) decoder.push(Buffer.alloc(1000, 0x42));
  t.is(decoder.counters.oversize, 1);
  t.true(decoder.pending <= 229);
  t.deepEqual(
    decoder.push(Buffer.concat([Buffer.from([0]), command])).map((f) => f.type),
    [LinkType.COMMAND],
  );
  // 230 encoded bytes before the delimiter (231 with it) are too many; 229 are accepted for decoding.
  const d2 = new LinkFrameDecoder();
  d2.push(Buffer.concat([Buffer.alloc(230, 0x01), Buffer.from([0])]));
  t.is(d2.counters.oversize, 1);
  const d3 = new LinkFrameDecoder();
  d3.push(Buffer.concat([Buffer.alloc(229, 0x01), Buffer.from([0])]));
  t.is(d3.counters.oversize, 0);
  t.is(d3.counters.badCobs + d3.counters.badCrc, 1);
});

test('decoder: a valid CRC over an undefined type is counted as unknownType', (t) => {
  const raw = Buffer.from([0x03, 0xaa]);
  const crc = crc16(raw);
  const framed = Buffer.concat([
    cobsEncode(Buffer.concat([raw, Buffer.from([crc >> 8, crc & 0xff])])),
    Buffer.from([0]),
  ]);
  const decoder = new LinkFrameDecoder();
  t.deepEqual(decoder.push(framed), []);
  t.is(decoder.counters.unknownType, 1);
});
