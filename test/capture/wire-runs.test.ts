// lib/capture/wire-runs.ts: serial bytes split at each 0x00 into runs, each
// marked whether it made a frame, the same however the bytes arrive.
import test from 'ava';
import fc from 'fast-check';
import { LinkType, cobsEncode, crc16, encodeLinkFrame, tryDecodeLinkFrame } from '../../firmware-protocol/index.js';
import { MAX_HELD_WIRE_BYTES, WireRuns, type WireRun } from '../../lib/capture/wire-runs.js';
import { access } from '../helpers/protocol-fixtures.js';

const command = encodeLinkFrame(LinkType.COMMAND, access());
const statusRequest = encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0));

/** A link frame whose CRC is off by one bit: COBS, delimiter and all. */
function badCrcFrame(): Buffer {
  const raw = Buffer.concat([Buffer.from([LinkType.COMMAND]), access(), Buffer.alloc(2)]);
  raw.writeUInt16BE(crc16(raw, 0, raw.length - 2) ^ 1, raw.length - 2);
  return Buffer.concat([cobsEncode(raw), Buffer.from([0])]);
}

function pushAll(chunks: readonly Uint8Array[]): { runs: WireRun[]; rest: WireRun | undefined } {
  const wireRuns = new WireRuns();
  const runs = chunks.flatMap((chunk) => wireRuns.push(chunk));
  return { runs, rest: wireRuns.flush() };
}

const plain = (runs: readonly WireRun[]): { bytes: string; frame: boolean }[] =>
  runs.map((run) => ({ bytes: run.bytes.toString('hex'), frame: run.frame }));

test('frames and what makes no frame, each run with its delimiter, marked', (t) => {
  const undefinedType = Buffer.from([0x03, 0xaa, 0, 0]);
  undefinedType.writeUInt16BE(crc16(undefinedType, 0, 2), 2);
  const pieces = [
    command,
    Buffer.from([0]),
    badCrcFrame(),
    Buffer.from([0x05, 0x01, 0x00]),
    Buffer.concat([cobsEncode(undefinedType), Buffer.from([0])]),
    Buffer.from([0x02, 0x01, 0x00]),
    statusRequest,
  ];
  const { runs, rest } = pushAll([Buffer.concat(pieces)]);
  t.deepEqual(
    plain(runs),
    pieces.map((piece, index) => ({ bytes: piece.toString('hex'), frame: index === 0 || index === 6 })),
    'a command, a lone delimiter, a bad CRC, bad COBS, an undefined link type, too short for a CRC, a status request',
  );
  t.is(rest, undefined);
});

test('a run longer than 1,024 bytes: pieces of 1,024, none a frame, and the frame after it is one again', (t) => {
  const long = Buffer.concat([Buffer.alloc(2500, 0x41), Buffer.from([0])]);
  const { runs } = pushAll([long, command]);
  t.deepEqual(
    runs.map((run) => [run.bytes.length, run.frame]),
    [
      [MAX_HELD_WIRE_BYTES, false],
      [MAX_HELD_WIRE_BYTES, false],
      [2501 - 2 * MAX_HELD_WIRE_BYTES, false],
      [command.length, true],
    ],
  );
  t.deepEqual(Buffer.concat(runs.map((run) => run.bytes)), Buffer.concat([long, command]));
});

test('bytes without their delimiter are held, then flushed as no frame', (t) => {
  const wireRuns = new WireRuns();
  t.deepEqual(wireRuns.push(command.subarray(0, 10)), []);
  t.deepEqual(wireRuns.flush(), { bytes: command.subarray(0, 10), frame: false });
  t.is(wireRuns.flush(), undefined, 'nothing is held any more');
  t.deepEqual(plain(wireRuns.push(command)), [{ bytes: command.toString('hex'), frame: true }]);
});

test("the caller's buffer may be reused once push returns: held bytes are copies", (t) => {
  const wireRuns = new WireRuns();
  const buffer = Buffer.from(command.subarray(0, 20));
  wireRuns.push(buffer);
  buffer.fill(0x77);
  t.deepEqual(plain(wireRuns.push(command.subarray(20))), [{ bytes: command.toString('hex'), frame: true }]);
});

/** A stream of frames, junk and long runs. */
const pieces = fc.array(
  fc.oneof(
    fc.constant(command),
    fc.constant(statusRequest),
    fc.constant(badCrcFrame()),
    fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
    fc.integer({ min: 1000, max: 2200 }).map((length) => Buffer.alloc(length, 0x5a)),
  ),
  { maxLength: 12 },
);

test('chunks split anywhere give the same runs, and the runs are the bytes', (t) => {
  fc.assert(
    fc.property(pieces, fc.array(fc.nat(), { maxLength: 20 }), (parts, cuts) => {
      const stream = Buffer.concat(parts);
      const whole = pushAll([stream]);
      const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
      const chunks = [0, ...points].map((from, index) => stream.subarray(from, points[index] ?? stream.length));
      const split = pushAll(chunks);
      const all = [...whole.runs, ...(whole.rest === undefined ? [] : [whole.rest])];
      return (
        JSON.stringify(plain(split.runs)) === JSON.stringify(plain(whole.runs)) &&
        JSON.stringify(split.rest && plain([split.rest])) === JSON.stringify(whole.rest && plain([whole.rest])) &&
        Buffer.concat(all.map((run) => run.bytes)).equals(stream) &&
        all.every((run) => run.bytes.length <= MAX_HELD_WIRE_BYTES)
      );
    }),
  );
  t.pass();
});

test('a run is a frame exactly when the protocol decodes it and it is no piece of a longer run', (t) => {
  fc.assert(
    fc.property(pieces, (parts) => {
      const { runs } = pushAll([Buffer.concat(parts)]);
      let afterPiece = false;
      for (const run of runs) {
        const delimited = run.bytes.at(-1) === 0;
        const decodes =
          delimited &&
          run.bytes.length > 1 &&
          typeof tryDecodeLinkFrame(run.bytes, 0, run.bytes.length - 1) !== 'string';
        if (run.frame !== (decodes && !afterPiece)) return false;
        afterPiece = !delimited;
      }
      return true;
    }),
  );
  t.pass();
});

test('a response frame from the box makes a frame run too, with the link frame it decodes to', (t) => {
  const response = encodeLinkFrame(LinkType.RESPONSE, Buffer.alloc(32, 1));
  const { runs } = pushAll([response]);
  t.deepEqual(plain(runs), [{ bytes: response.toString('hex'), frame: true }]);
  t.deepEqual(runs[0]?.linkFrame, { type: LinkType.RESPONSE, payload: Buffer.alloc(32, 1) });
  t.is(pushAll([badCrcFrame()]).runs[0]?.linkFrame, undefined, 'none for bytes that make no frame');
});
