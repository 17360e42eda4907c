// BLE link (docs/protocol.md, BLE link): chunking at several MTUs and reassembly.
import test from 'ava';
import {
  BleReassembler,
  BleUuid,
  MAX_COMMAND_LENGTH,
  ProtocolError,
  bleLocalName,
  chunkFrame,
} from '../../firmware-protocol/index.js';
import { signedAccess } from '../helpers/protocol-fixtures.js';

/** docs/protocol.md, Sizes: the longest command, an ACCESS_SIGNED of 32 modules (225 bytes). */
const longest = signedAccess({ body: { moduleIds: Array.from({ length: 32 }, (_, i) => i) } });
if (longest.length !== MAX_COMMAND_LENGTH)
  throw new Error(`the longest command is ${longest.length} bytes, not ${MAX_COMMAND_LENGTH}`);

for (const mtu of [23, 27, 64, 185, 247, 512]) {
  test(`MTU ${mtu}: chunks of at most MTU − 3 bytes, counters from 0, last bit on the last only; reassembles`, (t) => {
    const chunks = chunkFrame(longest, mtu);
    t.is(chunks.length, Math.ceil(longest.length / (mtu - 4)));
    chunks.forEach((chunk, i) => {
      t.true(chunk.length <= mtu - 3);
      t.is((chunk[0] ?? 0) & 0x7f, i);
      t.is(((chunk[0] ?? 0) & 0x80) !== 0, i === chunks.length - 1);
    });
    const reassembler = new BleReassembler();
    const out = chunks.map((c) => reassembler.push(c));
    t.deepEqual(out.at(-1), longest);
    t.true(out.slice(0, -1).every((f) => f === null));
  });
}

test('a short frame travels in a single chunk with header 0x80', (t) => {
  const chunks = chunkFrame(Buffer.alloc(32, 1), 185);
  t.is(chunks.length, 1);
  t.is(chunks[0]?.[0], 0x80);
});

test('chunkFrame refuses an MTU below 23, the smallest ATT MTU (docs/protocol.md, BLE link): the longest frame takes 12 chunks there', (t) => {
  t.throws(() => chunkFrame(longest, 5), { instanceOf: ProtocolError });
  t.throws(() => chunkFrame(longest, 22), { instanceOf: ProtocolError, message: /MTU must be an integer >= 23/ });
  t.is(chunkFrame(longest, 23).length, 12);
  t.is(chunkFrame(Buffer.alloc(19 * 128, 1), 23).length, 128);
  t.throws(() => chunkFrame(Buffer.alloc(19 * 128 + 1, 1), 23), { instanceOf: ProtocolError });
});

test('reassembler: a lost chunk drops the frame and is counted; the next frame comes through', (t) => {
  const r = new BleReassembler();
  const chunks = chunkFrame(longest, 23);
  for (const [i, c] of chunks.entries()) if (i !== 2) t.is(r.push(c), null);
  t.is(r.counters.counterErrors, 1);
  let frame: Buffer | null = null;
  for (const c of chunkFrame(longest, 23)) frame = r.push(c);
  t.deepEqual(frame, longest);
  t.is(r.counters.frames, 1);
});

test('reassembler: a new frame (counter 0) cutting a partial one counts an error; repeated chunks too; empty chunks are counted', (t) => {
  const r = new BleReassembler();
  const chunks = chunkFrame(longest, 23);
  r.push(chunks[0] ?? Buffer.alloc(0));
  r.push(chunks[1] ?? Buffer.alloc(0));
  r.push(chunks[1] ?? Buffer.alloc(0));
  t.is(r.counters.counterErrors, 1);
  let frame: Buffer | null = null;
  for (const c of chunks) frame = r.push(c);
  t.deepEqual(frame, longest);
  r.push(chunks[0] ?? Buffer.alloc(0));
  r.push(chunkFrame(Buffer.alloc(10, 2), 23)[0] ?? Buffer.alloc(0));
  t.is(r.counters.counterErrors, 2);
  t.is(r.push(Buffer.alloc(0)), null);
  t.is(r.counters.emptyChunks, 1);
  // Dropped as they came: the repeated chunk, the empty one. The chunks of the
  // frames cut short by a new one were kept when they came.
  t.is(r.counters.droppedChunks, 2);
});

test('reassembler: droppedChunks counts each chunk that made no frame as it arrived, waiting for a start included', (t) => {
  const r = new BleReassembler();
  const [first, second, third] = chunkFrame(longest, 23);
  if (first === undefined || second === undefined || third === undefined) return t.fail();
  r.push(second); // out of order
  r.push(third); // waiting for a start
  t.is(r.counters.droppedChunks, 2);
  r.push(first);
  r.push(second);
  t.is(r.counters.droppedChunks, 2, 'a frame under way drops nothing');
  const tooLong = new BleReassembler(32);
  for (const chunk of chunkFrame(Buffer.alloc(64, 1), 23)) tooLong.push(chunk);
  // 20 + 20 bytes pass 32 at the second chunk; the fourth waits for a start.
  t.is(tooLong.counters.droppedChunks, chunkFrame(Buffer.alloc(64, 1), 23).length - 1);
});

test('reassembler: frames longer than the limit are dropped and counted', (t) => {
  const r = new BleReassembler(32);
  for (const c of chunkFrame(Buffer.alloc(64, 1), 23)) t.is(r.push(c), null);
  t.is(r.counters.oversize, 1);
  // The default limit is the longest command (docs/protocol.md, Sizes): 225 bytes pass, 226 do not.
  const byDefault = new BleReassembler();
  for (const c of chunkFrame(Buffer.concat([longest, Buffer.of(0)]), 23)) t.is(byDefault.push(c), null);
  t.is(byDefault.counters.oversize, 1);
  t.deepEqual(
    chunkFrame(longest, 23)
      .map((c) => byDefault.push(c))
      .at(-1),
    longest,
  );
});

test('UUIDs and the advertised name', (t) => {
  t.is(BleUuid.service, '6b1d0001-7a3e-4c1b-9f5e-2d8a3c4b5e6f');
  t.is(BleUuid.command, '6b1d0002-7a3e-4c1b-9f5e-2d8a3c4b5e6f');
  t.is(BleUuid.response, '6b1d0003-7a3e-4c1b-9f5e-2d8a3c4b5e6f');
  t.is(bleLocalName(9101), 'PB-9101');
});
