// The fixed-header scanner in front of aedes: split headers,
// several packets in one chunk, the CONNECT limit, a malformed length.
import test from 'ava';
import { PacketSizeScanner, type PacketRefusal } from '../../../api/mqtt/packet-size-guard.js';

const limits = { connectBytes: 64, packetBytes: 300 };

/** Scans the chunks as a connection would: the bytes it passes on, and the refusal if any. */
function feed(
  chunks: readonly number[][],
  loggedIn = false,
): { passed: number[]; error?: { refusal: Omit<PacketRefusal, 'offset'> } } {
  const scanner = new PacketSizeScanner(limits);
  if (loggedIn) scanner.loggedIn();
  const passed: number[] = [];
  for (const chunk of chunks) {
    const refusal = scanner.scan(Uint8Array.from(chunk));
    if (refusal !== null) {
      const { offset, ...rest } = refusal;
      passed.push(...chunk.slice(0, offset));
      return { passed, error: { refusal: rest } };
    }
    passed.push(...chunk);
  }
  return { passed };
}

const packet = (type: number, body: number): number[] => {
  const length: number[] = [];
  let value = body;
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    length.push(byte);
  } while (value > 0);
  return [type, ...length, ...new Array<number>(body).fill(0x61)];
};

test('packets within the limits pass unchanged, whatever the chunking', (t) => {
  const bytes = [...packet(0x10, 60), ...packet(0x30, 200), ...packet(0xc0, 0), ...packet(0x30, 296)];
  t.deepEqual(feed([bytes], true).passed, bytes, 'all in one chunk');
  t.deepEqual(
    feed(
      bytes.map((byte) => [byte]),
      true,
    ).passed,
    bytes,
    'one byte a chunk: headers split',
  );
});

test('before login every packet has the CONNECT limit', (t) => {
  const connect = packet(0x10, 10);
  const { passed, error } = feed([connect, packet(0x30, 200)]);
  t.deepEqual(passed, connect);
  t.deepEqual(error?.refusal, { declaredBytes: 1 + 2 + 200, limitBytes: 64, beforeLogin: true });
});

test('a packet over the CONNECT limit is refused at its header', (t) => {
  const { passed, error } = feed([[0x10, 0xff, 0xff, 0xff, 0x7f]]);
  t.deepEqual(passed, []);
  t.deepEqual(error?.refusal, { declaredBytes: 5 + 268_435_455, limitBytes: 64, beforeLogin: true });
  t.deepEqual(
    feed([packet(0x10, 63)]).error?.refusal,
    { declaredBytes: 64 + 1, limitBytes: 64, beforeLogin: true },
    'one byte over',
  );
});

test('after login a packet over the packet limit is refused; the complete packets before it pass', (t) => {
  const connect = packet(0x10, 10);
  const { passed, error } = feed([[...connect, ...packet(0x30, 298).slice(0, 3)]], true);
  t.deepEqual(passed, connect);
  t.deepEqual(error?.refusal, { declaredBytes: 1 + 2 + 298, limitBytes: 300, beforeLogin: false });
});

test('a remaining length of more than 4 bytes is refused as malformed', (t) => {
  const { error } = feed([[0x10, 0x80, 0x80, 0x80, 0x80, 0x01]]);
  t.deepEqual(error?.refusal, { declaredBytes: null, limitBytes: 64, beforeLogin: true });
});
