// Bad input, as properties (fast-check), issue 2 items 1-4.
import test from 'ava';
import fc from 'fast-check';
import {
  Barrier,
  FrameKind,
  LinkFrameDecoder,
  LinkType,
  ProtocolError,
  type ResponseFields,
  Status,
  type AccessBody,
  chunkFrame,
  BleReassembler,
  cobsDecode,
  cobsEncode,
  decide,
  decodeLinkFrame,
  encodeLinkFrame,
  openCommand,
  parseCommandHeader,
  parseResponse,
  renderCommand,
  renderResponse,
  sealCommand,
  sealResponse,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import { boxKey, conditions, config, flipBit, parkingKey, state } from './fixtures.js';

const u32 = fc.nat({ max: 0xffffffff });
const u8 = fc.nat({ max: 0xff });
const key = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => Buffer.from(a));
const nonce = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((a) => Buffer.from(a));
const accessBody: fc.Arbitrary<AccessBody> = fc.record({
  notBefore: u32,
  notAfter: u32,
  maxEntries: u8,
  maxExits: u8,
  moduleIds: fc.array(u32, { minLength: 1, maxLength: 32 }),
});
const command = fc.oneof(
  fc.record({ kind: fc.constant(FrameKind.ACCESS), keyId: u32, scope: u32, body: accessBody }),
  fc.record({ kind: fc.constant(FrameKind.BATTERY_QUERY), keyId: u32, scope: u32, body: fc.constant({}) }),
  fc.record({ kind: fc.constant(FrameKind.TIME_SET), keyId: u32, scope: u32, body: fc.record({ time: u32 }) }),
);
const responseFields: fc.Arbitrary<ResponseFields> = fc.record({
  status: fc.constantFrom(...Object.values(Status)),
  kind: u8,
  moduleId: u32,
  keyId: u32,
  boxSeq: u32,
  boxTime: u32,
  batteryMv: fc.nat({ max: 0xffff }),
  barrier: fc.constantFrom(...Object.values(Barrier)),
  direction: fc.constantFrom(0 as const, 1 as const, 2 as const),
  remaining: u8,
});

test('property 1: every command kind round-trips through seal and open', (t) => {
  fc.assert(
    fc.property(command, key, nonce, (fields, k, n) => {
      const frame = sealCommand({ ...fields, key: k, nonce: n });
      const opened = openCommand(frame, k);
      return opened.ok && opened.keyIndex === 0 && JSON.stringify({ ...opened.command, nonce: opened.command.nonce.toString('hex') }) === JSON.stringify({ ...fields, nonce: n.toString('hex') });
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property 1: responses round-trip through seal, verify and parse; link frames and BLE chunks round-trip', (t) => {
  fc.assert(
    fc.property(responseFields, key, fc.option(fc.uint8Array({ minLength: 0, maxLength: 169 })), (fields, k, cmd) => {
      const frame = sealResponse(fields, k, cmd);
      const { version, tag, ...parsed } = parseResponse(frame);
      return version === 1 && tag.length === 8 && verifyResponse(frame, k, cmd) && JSON.stringify(parsed) === JSON.stringify(fields);
    }),
    { numRuns: 300 },
  );
  fc.assert(
    fc.property(fc.constantFrom(...Object.values(LinkType)), fc.uint8Array({ maxLength: 169 }), fc.integer({ min: 6, max: 300 }), (type, payload, mtu) => {
      const decoded = decodeLinkFrame(encodeLinkFrame(type, payload));
      const reassembler = new BleReassembler(512);
      const frames = chunkFrame(payload, mtu).map((c) => reassembler.push(c));
      const cobs = cobsDecode(cobsEncode(payload));
      return decoded.type === type && decoded.payload.equals(payload) && frames.at(-1)?.equals(payload) === true && cobs?.equals(payload) === true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property 2: flipping any single bit of a sealed command never yields OK (decide) nor opens', (t) => {
  const box = { ...config, parkingKeyNext: null };
  const boxState = { ...state, lastControlSeq: 0 };
  fc.assert(
    fc.property(
      command.map((c) => ({ ...c, scope: c.kind === FrameKind.ACCESS ? 7 : 101 })),
      fc.nat(),
      (fields, bitSeed) => {
        const k = fields.kind === FrameKind.ACCESS ? parkingKey : boxKey;
        const frame = sealCommand({ ...fields, key: k });
        const bit = bitSeed % (frame.length * 8);
        const flipped = flipBit(frame, bit);
        return !openCommand(flipped, k).ok && decide(box, boxState, conditions, flipped).status !== Status.OK;
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});

test('property 2: flipping any single bit of a response never verifies', (t) => {
  fc.assert(
    fc.property(responseFields, fc.uint8Array({ minLength: 22, maxLength: 169 }), fc.nat({ max: 255 }), (fields, cmd, bit) => {
      const frame = sealResponse(fields, boxKey, cmd);
      return !verifyResponse(flipBit(frame, bit), boxKey, cmd);
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('property 3: random bytes up to 1 KiB never throw anything but ProtocolError, and return', (t) => {
  const only = (fn: () => unknown): boolean => {
    try {
      fn();
      return true;
    } catch (error) {
      return error instanceof ProtocolError;
    }
  };
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 1024 }), (raw) => {
      const bytes = Buffer.from(raw);
      // These return statuses or strings: they must not throw at all.
      openCommand(bytes, [parkingKey, boxKey]);
      parseCommandHeader(bytes);
      decide(config, state, conditions, bytes);
      verifyResponse(bytes, boxKey, bytes);
      renderCommand(bytes, parkingKey);
      renderResponse(bytes);
      new LinkFrameDecoder().push(bytes);
      new BleReassembler().push(bytes);
      cobsDecode(bytes);
      // These may refuse with the module's own typed error only.
      return only(() => parseResponse(bytes)) && only(() => decodeLinkFrame(bytes));
    }),
    { numRuns: 1000 },
  );
  // Bytes shaped like frames reach deeper paths: a valid header with random rest.
  fc.assert(
    fc.property(fc.constantFrom(1, 2, 3), fc.uint8Array({ minLength: 28, maxLength: 1000 }), (kind, rest) => {
      const bytes = Buffer.concat([Buffer.from([1, kind]), rest]);
      return decide(config, state, conditions, bytes).status !== Status.OK && only(() => parseResponse(bytes.subarray(0, 32)));
    }),
    { numRuns: 500 },
  );
  t.pass();
});

const linkFrame = fc
  .tuple(fc.constantFrom(...Object.values(LinkType)), fc.uint8Array({ maxLength: 169 }))
  .map(([type, payload]) => ({ type, payload: Buffer.from(payload), bytes: encodeLinkFrame(type, payload) }));

test('property 4: the streaming decoder, fed valid frames split at random with noise between, recovers every frame noise did not touch', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ frame: linkFrame, noise: fc.option(fc.uint8Array({ minLength: 1, maxLength: 400 }), { freq: 2 }), noiseEndsWithZero: fc.boolean() }), { minLength: 1, maxLength: 20 }),
      fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 50 }),
      (items, splits) => {
        const parts: Buffer[] = [];
        const expected: Buffer[] = [];
        for (const item of items) {
          // Noise before a frame touches it unless a 0x00 ends the noise.
          let clean = true;
          if (item.noise !== null) {
            parts.push(Buffer.from(item.noise));
            clean = item.noiseEndsWithZero;
            if (clean) parts.push(Buffer.from([0]));
          }
          parts.push(item.frame.bytes);
          if (clean) expected.push(Buffer.concat([Buffer.from([item.frame.type]), item.frame.payload]));
        }
        const stream = Buffer.concat(parts);
        const decoder = new LinkFrameDecoder();
        const got: Buffer[] = [];
        let offset = 0;
        let i = 0;
        while (offset < stream.length) {
          const size = splits[i++ % splits.length] ?? 1;
          for (const f of decoder.push(stream.subarray(offset, offset + size))) got.push(Buffer.concat([Buffer.from([f.type]), f.payload]));
          offset += size;
        }
        // Every expected frame appears, in order (noise may rarely add a frame with a lucky CRC).
        let j = 0;
        for (const frame of got) if (j < expected.length && frame.equals(expected[j] ?? Buffer.alloc(0))) j++;
        return j === expected.length && decoder.pending <= 175;
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});
