// tools/wireshark/parkbench.lua on what no tool of parkbench writes: a file
// cut in its last block, packets that are not parkbench records, every cut
// of every packet of a real capture, and random records. Each packet is
// shown (its Info set), the broken ones as malformed, and no Lua error
// comes out. The tshark helper itself is shown to catch a Lua error, so
// that "no Lua error" can fail.
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { LinkType, encodeLinkFrame } from '../../firmware-protocol/index.js';
import { enhancedPacketBlock, interfaceDescriptionBlock, sectionHeaderBlock } from '../../lib/capture/pcapng.js';
import { LINKTYPE_PARKBENCH, RECORD_HEADER_LENGTH } from '../../lib/capture/record.js';
import { readCapture } from '../helpers/pcapng.js';
import { testNeeding } from '../helpers/requires.js';
import { writeSampleCapture } from '../helpers/sample-capture.js';
import { DISSECTOR_PATH, TsharkError, dissect, dissectedText, framesMatching } from '../helpers/tshark.js';

const withTshark = testNeeding('tshark', test);
const folder = mkdtempSync(join(tmpdir(), 'pb-dissector-hostile-'));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));
const sample = writeSampleCapture(join(folder, 'sample.pcapng'));
const samplePackets = readCapture(sample.path).packets.map((packet) => packet.bytes);

/** A capture of `packets` as they are, on one parkbench interface. */
function captureOf(name: string, packets: readonly Uint8Array[]): string {
  const path = join(folder, name);
  const start = 1_767_225_600_000_000n;
  writeFileSync(
    path,
    Buffer.concat([
      sectionHeaderBlock('parkbench test'),
      interfaceDescriptionBlock(LINKTYPE_PARKBENCH, 'serial:/dev/null'),
      ...packets.map((packet, index) => enhancedPacketBlock(0, start + BigInt(index), packet)),
    ]),
  );
  return path;
}

/** A record header (docs/capture.md) with any values, and `data` after it. */
function record(
  fields: { version?: number; length?: number; link: number; direction: number; kind: number; flags?: number },
  data: Uint8Array,
): Buffer {
  const header = Buffer.from([
    fields.version ?? 1,
    fields.length ?? RECORD_HEADER_LENGTH,
    fields.link,
    fields.direction,
    fields.kind,
    fields.flags ?? 0x02,
    0,
    0,
    0,
    0,
    0x23,
    0x8d,
  ]);
  return Buffer.concat([header, data]);
}

withTshark('the tshark helper fails on a Lua error in a packet, and on a script that does not load', async (t) => {
  const failing = join(folder, 'failing.lua');
  const source = readFileSync(DISSECTOR_PATH, 'utf8');
  const broken = source.replace(
    'function parkbench.dissector(tvb, pinfo, tree)\n',
    'function parkbench.dissector(tvb, pinfo, tree)\n  if tvb:len() > 40 then error("a failing dissector") end\n',
  );
  t.not(broken, source);
  writeFileSync(failing, broken);
  const error = await t.throwsAsync(dissect(sample.path, ['parkbench.kind'], { script: failing }), {
    instanceOf: TsharkError,
  });
  t.regex(error.message, /a Lua error in the tree of packet \d+/);
  await t.throwsAsync(dissectedText(sample.path, { script: failing }), { message: /Lua Error/ });
  const unloadable = join(folder, 'unloadable.lua');
  writeFileSync(unloadable, 'local x = = 1\n');
  await t.throwsAsync(dissect(sample.path, [], { script: unloadable }), { message: /^a Lua error/ });
});

withTshark('a file cut in its last block opens: every packet before the cut is dissected', async (t) => {
  const cut = join(folder, 'cut.pcapng');
  writeFileSync(cut, readFileSync(sample.path));
  const size = readFileSync(cut).length;
  truncateSync(cut, size - 9);
  t.true(readCapture(cut).truncated);
  const packets = await dissect(cut, ['parkbench.record'], { cutShort: true });
  t.is(packets.length, sample.packets - 1);
  const whole = await dissect(sample.path, ['parkbench.record']);
  t.deepEqual(packets, whole.slice(0, -1));
  await t.throwsAsync(dissect(cut, []), { message: /unexpectedly cut short/ });
});

withTshark('packets that are not parkbench records show as malformed, with what is wrong', async (t) => {
  const frame = encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0));
  const path = captureOf('not-records.pcapng', [
    record({ version: 2, link: 1, direction: 1, kind: 1 }, frame),
    Buffer.alloc(0),
    Buffer.from([1, 12, 1, 1, 1]),
    record({ length: 40, link: 1, direction: 1, kind: 1 }, frame),
    record({ length: 4, link: 1, direction: 1, kind: 1 }, frame),
    record({ link: 9, direction: 1, kind: 1 }, frame),
    record({ link: 1, direction: 0, kind: 1 }, frame),
    record({ link: 1, direction: 1, kind: 7 }, frame),
    record({ link: 1, direction: 1, kind: 1 }, Buffer.alloc(0)),
    record({ link: 1, direction: 1, kind: 1 }, frame),
  ]);
  const info = (await dissect(path, [])).map((packet) => packet.info);
  t.deepEqual(info, [
    'not a parkbench record (version 0x02)',
    'not a parkbench record (empty)',
    'record header cut short',
    'not a parkbench record (header length 40)',
    'not a parkbench record (header length 4)',
    'not a parkbench record (link 9)',
    'not a parkbench record (direction 0)',
    'not a parkbench record (record 7)',
    '→ box 9101 wire bytes without data',
    '→ box 9101 status request',
  ]);
  t.deepEqual(await framesMatching(path, 'parkbench.malformed'), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.deepEqual(await framesMatching(path, '_ws.expert.group == "Malformed"'), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.notRegex(await dissectedText(path), /Lua Error/);
});

withTshark('every cut of every packet of a real capture is dissected without a Lua error', async (t) => {
  const cuts = samplePackets.flatMap((packet) =>
    Array.from({ length: packet.length }, (_, length) => packet.subarray(0, length)),
  );
  t.true(cuts.length > 5000);
  const path = captureOf('cuts.pcapng', cuts);
  const packets = await dissect(path, []);
  t.is(packets.length, cuts.length);
  t.deepEqual(
    packets.filter((packet) => packet.info === '').map((packet) => packet.frame),
    [],
    'every packet has its Info',
  );
  const malformed = new Set(await framesMatching(path, 'parkbench.malformed || parkbench.not_a_frame'));
  // A response frame cut short is malformed whatever its length.
  const responses = new Set(sample.responses.filter((response) => response.link !== 'serial').map((r) => r.frame));
  let at = 0;
  for (const [index, packet] of samplePackets.entries()) {
    for (let length = 0; length < packet.length; length += 1) {
      at += 1;
      if (length <= RECORD_HEADER_LENGTH || responses.has(index + 1))
        t.true(malformed.has(at), `packet ${index + 1} cut at ${length}`);
    }
  }
});

/** A record header of values mostly valid, sometimes not. */
const headers = fc.record({
  version: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 255 })),
  length: fc.oneof(fc.constant(RECORD_HEADER_LENGTH), fc.integer({ min: 0, max: 40 })),
  link: fc.integer({ min: 0, max: 4 }),
  direction: fc.integer({ min: 0, max: 3 }),
  kind: fc.integer({ min: 0, max: 6 }),
  flags: fc.integer({ min: 0, max: 255 }),
});

/** Data: random bytes, or a real packet's data changed at a few places, cut, or grown. */
const datas = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .record({
      packet: fc.constantFrom(...samplePackets),
      flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
      end: fc.option(fc.nat()),
      tail: fc.uint8Array({ maxLength: 8 }),
    })
    .map(({ packet, flips, end, tail }) => {
      const data = Buffer.from(packet.subarray(RECORD_HEADER_LENGTH));
      for (const [where, value] of flips) if (data.length > 0) data[where % data.length] = value;
      return Buffer.concat([data.subarray(0, end === null ? data.length : end % (data.length + 1)), tail]);
    }),
);

withTshark('random records, and real ones changed at random, are dissected without a Lua error', async (t) => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(headers, datas), { minLength: 200, maxLength: 400 }), async (records) => {
      run += 1;
      const path = captureOf(
        `random-${run}.pcapng`,
        records.map(([header, data]) => record(header, data)),
      );
      const packets = await dissect(path, ['parkbench.record']);
      t.is(packets.length, records.length);
      t.deepEqual(
        packets.filter((packet) => packet.info === '').map((packet) => packet.frame),
        [],
      );
      t.notRegex(await dissectedText(path), /Lua Error/);
    }),
    { numRuns: 4 },
  );
});
