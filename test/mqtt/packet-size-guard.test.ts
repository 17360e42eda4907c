// The fixed-header guard in front of aedes (issue 12): split headers, several
// packets in one chunk, the CONNECT limit, a malformed length.
import test from 'ava';
import { PacketSizeGuard, type PacketTooLargeError } from '../../api/mqtt/packet-size-guard.js';

const limits = { connectBytes: 64, packetBytes: 300 };

/** Feeds the chunks; resolves with the bytes passed and the refusal, if any. */
async function feed(chunks: readonly number[][], loggedIn = false): Promise<{ passed: number[]; error?: PacketTooLargeError }> {
  const guard = new PacketSizeGuard(limits);
  if (loggedIn) guard.loggedIn();
  const passed: number[] = [];
  guard.on('data', (chunk: Buffer) => passed.push(...chunk));
  const done = new Promise<PacketTooLargeError | undefined>((resolve) => {
    guard.once('error', (error) => resolve(error as PacketTooLargeError));
    guard.once('end', () => resolve(undefined));
  });
  for (const chunk of chunks) guard.write(Buffer.from(chunk));
  guard.end();
  const error = await done;
  return error === undefined ? { passed } : { passed, error };
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

test('packets within the limits pass unchanged, whatever the chunking', async (t) => {
  const bytes = [...packet(0x10, 60), ...packet(0x30, 200), ...packet(0xc0, 0), ...packet(0x30, 296)];
  t.deepEqual((await feed([bytes], true)).passed, bytes, 'all in one chunk');
  t.deepEqual((await feed(bytes.map((byte) => [byte]), true)).passed, bytes, 'one byte a chunk: headers split');
});

test('before login every packet has the CONNECT limit', async (t) => {
  const connect = packet(0x10, 10);
  const { passed, error } = await feed([connect, packet(0x30, 200)]);
  t.deepEqual(passed, connect);
  t.deepEqual(error?.refusal, { declaredBytes: 1 + 2 + 200, limitBytes: 64, beforeLogin: true });
});

test('a packet over the CONNECT limit is refused at its header', async (t) => {
  const { passed, error } = await feed([[0x10, 0xff, 0xff, 0xff, 0x7f]]);
  t.deepEqual(passed, []);
  t.deepEqual(error?.refusal, { declaredBytes: 5 + 268_435_455, limitBytes: 64, beforeLogin: true });
  t.deepEqual((await feed([packet(0x10, 63)])).error?.refusal, { declaredBytes: 64 + 1, limitBytes: 64, beforeLogin: true }, 'one byte over');
});

test('after login a packet over the packet limit is refused; the complete packets before it pass', async (t) => {
  const connect = packet(0x10, 10);
  const { passed, error } = await feed([[...connect, ...packet(0x30, 298).slice(0, 3)]], true);
  t.deepEqual(passed, connect);
  t.deepEqual(error?.refusal, { declaredBytes: 1 + 2 + 298, limitBytes: 300, beforeLogin: false });
});

test('a remaining length of more than 4 bytes is refused as malformed', async (t) => {
  const { error } = await feed([[0x10, 0x80, 0x80, 0x80, 0x80, 0x01]]);
  t.deepEqual(error?.refusal, { declaredBytes: null, limitBytes: 64, beforeLogin: true });
});
