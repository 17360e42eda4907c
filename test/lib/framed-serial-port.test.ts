// FramedSerialPort on serialport's mock binding (the port injected, as
// every transport is): reconnects,
// replug and framing, on the injected clock, without socat. The same class over
// real pty pairs is covered by the integration tests (test/simulator/serial-link,
// test/gateway/gateway-serial, test/e2e/serial-bench).
import { once } from 'node:events';
import test, { type ExecutionContext } from 'ava';
import { SerialPortMock } from 'serialport';
import { SerialPortStream } from '@serialport/stream';
import { LinkType, encodeLinkFrame } from '../../firmware-protocol/index.js';
import type { BackoffPolicy } from '../../lib/backoff.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { FramedSerialPort, type SerialPortFactory } from '../../lib/framed-serial-port.js';
import type { LinkFrame } from '../../lib/link-frame-stream.js';
import { waitFor } from '../helpers/wait.js';

const mockBinding = SerialPortMock.binding;
type MockPort = Awaited<ReturnType<typeof mockBinding.open>>;
type OpenOptions = Parameters<typeof mockBinding.open>[0];

/** No jitter: the reopen delays are exactly 100, 200, 400 ... ms. */
const backoff: BackoffPolicy = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0 };

/** An open mock port whose device can vanish: pulled, its pending and later
 * reads and writes fail with EIO, as a tty's do when the USB adapter goes
 * (serialport then closes the stream as disconnected). */
class PullablePort {
  #pulled: Error | undefined;
  #writesBroken: Error | undefined;
  readonly #readers = new Set<(error: Error) => void>();

  constructor(readonly inner: MockPort) {}

  get openOptions(): MockPort['openOptions'] {
    return this.inner.openOptions;
  }

  get isOpen(): boolean {
    return this.inner.isOpen;
  }

  pull(): void {
    this.#pulled = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
    for (const reject of this.#readers) reject(this.#pulled);
  }

  /** Writes fail from now on (the device went away in the middle of a write). */
  breakWrites(): void {
    this.#writesBroken = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
  }

  read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    if (this.#pulled !== undefined) return Promise.reject(this.#pulled);
    return new Promise((resolve, reject) => {
      this.#readers.add(reject);
      this.inner
        .read(buffer, offset, length)
        .then(resolve, reject)
        .finally(() => this.#readers.delete(reject));
    });
  }

  write(buffer: Buffer): Promise<void> {
    const broken = this.#pulled ?? this.#writesBroken;
    return broken === undefined ? this.inner.write(buffer) : Promise.reject(broken);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
  update(options: Parameters<MockPort['update']>[0]): Promise<void> {
    return this.inner.update(options);
  }
  set(options: Parameters<MockPort['set']>[0]): Promise<void> {
    return this.inner.set(options);
  }
  get(): ReturnType<MockPort['get']> {
    return this.inner.get();
  }
  getBaudRate(): Promise<{ baudRate: number }> {
    return this.inner.getBaudRate();
  }
  flush(): Promise<void> {
    return this.inner.flush();
  }
  drain(): Promise<void> {
    return this.inner.drain();
  }
}

let cables = 0;

/** A cable to a box on the mock binding (a path of its own: the mock's port
 * table is shared by the tests of this file, which run concurrently). The
 * test is the box: it sends bytes to the port and reads what was written. */
class Cable {
  readonly path = `/dev/ttyMOCK${cables++}`;
  /** Times the port was asked to open, plugged or not. */
  openAttempts = 0;
  #plugged: boolean;
  #open: PullablePort | undefined;

  /** `maxReadSize`: the most bytes one read returns; `readyData`: what the
   * box has already sent when the port opens (its start-up status report). */
  constructor(plugged = true, options: { maxReadSize?: number; readyData?: Buffer } = {}) {
    this.#plugged = plugged;
    mockBinding.createPort(this.path, { record: true, ...options });
  }

  /** A serialport binding (list and open) over the mock's, whose ports can be pulled. */
  readonly binding = {
    list: () => mockBinding.list(),
    open: async (options: OpenOptions): Promise<PullablePort> => {
      this.openAttempts++;
      if (!this.#plugged)
        throw Object.assign(new Error(`Error: No such file or directory, cannot open ${options.path}`), {
          code: 'ENOENT',
        });
      this.#open = new PullablePort(await mockBinding.open(options));
      return this.#open;
    },
  };

  /** serialport's own stream over this cable's binding. */
  readonly createPort: SerialPortFactory = ({ path, baudRate }) =>
    new SerialPortStream({ binding: this.binding, path, baudRate, autoOpen: false });

  /** The box sends bytes down the cable. */
  send(bytes: Uint8Array): void {
    if (this.#open === undefined) throw new Error('nothing open on the cable');
    this.#open.inner.emitData(Buffer.from(bytes));
  }

  /** Bytes the box sent that the port has not read yet. */
  get unread(): number {
    return this.#open?.inner.port.data.length ?? 0;
  }

  /** What the port wrote since it was last opened. */
  get written(): Buffer {
    return this.#open?.inner.recording ?? Buffer.alloc(0);
  }

  pull(): void {
    this.#plugged = false;
    this.#open?.pull();
  }

  breakWrites(): void {
    this.#open?.breakWrites();
  }

  plug(): void {
    this.#plugged = true;
  }
}

interface Bench {
  readonly cable: Cable;
  readonly clock: FakeClock;
  readonly port: FramedSerialPort;
  readonly frames: LinkFrame[];
  /** Resolves with the next frame the port passes on. */
  readonly nextFrame: () => Promise<LinkFrame>;
}

function bench(t: ExecutionContext, cable = new Cable(), flushOnOpen = false): Bench {
  const clock = new FakeClock();
  const port = new FramedSerialPort({
    target: { path: cable.path, baudRate: 115_200 },
    clock,
    backoff,
    createPort: cable.createPort,
    flushOnOpen,
  });
  t.teardown(() => port.stop());
  const frames: LinkFrame[] = [];
  port.on('frame', (frame) => frames.push(frame));
  const nextFrame = async (): Promise<LinkFrame> => {
    const [frame] = (await once(port, 'frame')) as [LinkFrame];
    return frame;
  };
  return { cable, clock, port, frames, nextFrame };
}

const response = (marker: number): Buffer =>
  encodeLinkFrame(LinkType.RESPONSE, Buffer.from([0x11, 0x22, 0x33, marker]));
const hexOf = (frame: LinkFrame): string => `${frame.type.toString(16)}:${frame.payload.toString('hex')}`;

test('opens through the factory, passes on the frames it reads and writes link frames', async (t) => {
  const { cable, port, nextFrame } = bench(t);
  await port.start();
  t.true(port.isOpen);
  t.is(port.opens, 1);
  const arriving = nextFrame();
  cable.send(response(1));
  t.is(hexOf(await arriving), '81:11223301');
  t.true(port.send(LinkType.STATUS_REQUEST, Buffer.alloc(0)));
  await waitFor(() => cable.written.length > 0, 'the status request on the wire');
  t.deepEqual(cable.written, encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0)));
});

test('framing: a frame read a few bytes at a time (its CRC arriving on its own) is one frame', async (t) => {
  const { cable, port, nextFrame } = bench(t, new Cable(true, { maxReadSize: 2 }));
  await port.start();
  const arriving = nextFrame();
  cable.send(response(2));
  t.is(hexOf(await arriving), '81:11223302');
  t.is(port.badFrames, 0);
});

test('framing: two frames in one chunk are two frames, in order', async (t) => {
  const { cable, port, frames } = bench(t);
  await port.start();
  cable.send(Buffer.concat([response(3), response(4)]));
  await waitFor(() => frames.length === 2, 'both frames');
  t.deepEqual(frames.map(hexOf), ['81:11223303', '81:11223304']);
});

test('framing: noise, an oversize run, a bad CRC and an unknown type are each counted and dropped; the frame after them arrives alone', async (t) => {
  const { cable, port, frames, nextFrame } = bench(t);
  await port.start();
  const badCrc = Buffer.from(response(5));
  badCrc[2] = (badCrc[2] ?? 0) ^ 0x01; // the first payload byte (byte 0 is the COBS code, 1 the type): the CRC no longer matches
  cable.send(Buffer.from([0x00, 0x00])); // idle line: no error
  cable.send(Buffer.from([0x01, 0x02, 0x00])); // noise ended by a delimiter: too short for a frame
  cable.send(Buffer.concat([Buffer.alloc(300, 0x55), Buffer.from([0x00])])); // longer than any link frame
  cable.send(badCrc);
  cable.send(frameOfUnknownType());
  // The marker: sent after all of them on the same line, so when it arrives they have all been read.
  const arriving = nextFrame();
  cable.send(response(6));
  t.is(hexOf(await arriving), '81:11223306');
  t.deepEqual(frames.map(hexOf), ['81:11223306'], 'nothing before the marker was passed on');
  t.like(port.decoderCounters, { frames: 1, oversize: 1, badCrc: 1, unknownType: 1 });
  t.is(port.decoderCounters.badCobs + port.decoderCounters.badCrc, 2, 'the noise counted as a bad frame (COBS or CRC)');
  t.is(port.badFrames, 4);
});

test('reconnects: started with retry before the device is there, it keeps trying with backoff on the clock and opens once it appears', async (t) => {
  const { cable, clock, port, nextFrame } = bench(t, new Cable(false));
  await port.start(true);
  t.false(port.isOpen);
  t.is(cable.openAttempts, 1);
  t.is(clock.pendingTimers, 1, 'a reopen is scheduled');
  await retriesAt(t, cable, clock, [100, 200, 400]);
  cable.plug();
  const opened = once(port, 'open');
  clock.advance(800);
  await opened;
  t.is(cable.openAttempts, 5);
  t.is(port.opens, 1);
  const arriving = nextFrame();
  cable.send(response(7));
  t.is(hexOf(await arriving), '81:11223307');
});

test('replug: the device vanishing closes the port; it is reopened with backoff when it comes back, the partial frame forgotten and the backoff reset', async (t) => {
  const { cable, clock, port, frames } = bench(t);
  await port.start();
  const half = response(8).subarray(0, 4);
  cable.send(half);
  await waitFor(() => cable.unread === 0, 'the half frame read by the port');
  await new Promise((resolve) => setImmediate(resolve)); // and handed to the parser

  const closed = once(port, 'closed');
  cable.pull();
  await closed;
  t.false(port.isOpen);
  t.false(port.send(LinkType.STATUS_REQUEST, Buffer.alloc(0)), 'nothing written while the cable is out');
  await retriesAt(t, cable, clock, [100, 200]);

  cable.plug();
  const opened = once(port, 'open');
  clock.advance(400);
  await opened;
  t.is(port.opens, 2);
  t.true(port.isOpen);
  // A whole frame after the replug: the half frame from before must not merge with it.
  cable.send(response(9));
  await waitFor(() => frames.length + port.badFrames > 0, 'the frame after the replug, passed on or dropped');
  t.deepEqual(frames.map(hexOf), ['81:11223309']);
  t.is(port.badFrames, 0);
  t.true(port.send(LinkType.STATUS_REQUEST, Buffer.alloc(0)));

  // Unplugged again: the first retry is again after 100 ms (the attempts were reset by the open).
  const closedAgain = once(port, 'closed');
  cable.pull();
  await closedAgain;
  await retriesAt(t, cable, clock, [100]);
});

test('a write that fails (EIO) closes the port like a pulled cable; it is reopened and writes again', async (t) => {
  const { cable, clock, port } = bench(t);
  await port.start();
  cable.breakWrites();
  const closed = once(port, 'closed');
  t.true(port.send(LinkType.STATUS_REQUEST, Buffer.alloc(0)), 'written to an open port');
  await closed;
  t.false(port.isOpen);
  await waitFor(() => clock.pendingTimers === 1, 'the reopen scheduled');
  const opened = once(port, 'open');
  clock.advance(100);
  await opened;
  t.is(port.opens, 2);
  t.true(port.send(LinkType.STATUS_REQUEST, Buffer.alloc(0)));
  await waitFor(() => cable.written.length > 0, 'the status request on the wire');
  t.deepEqual(cable.written, encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0)));
});

for (const flushOnOpen of [true, false]) {
  test(`flushOnOpen ${String(flushOnOpen)}: what the box sent before the port opened is ${flushOnOpen ? 'discarded' : 'read'}`, async (t) => {
    const { cable, port, frames } = bench(t, new Cable(true, { readyData: response(10) }), flushOnOpen);
    await port.start();
    await new Promise((resolve) => setImmediate(resolve)); // the mock hands over its ready data on a later tick
    cable.send(response(11)); // the marker, sent after the open
    await waitFor(() => frames.some((frame) => hexOf(frame) === '81:1122330b'), 'the marker');
    t.deepEqual(frames.map(hexOf), flushOnOpen ? ['81:1122330b'] : ['81:1122330a', '81:1122330b']);
  });
}

test('stop: no reopen after the port is stopped, and a pending reopen is cancelled', async (t) => {
  const { cable, clock, port } = bench(t);
  await port.start();
  const closed = once(port, 'closed');
  cable.pull();
  await closed;
  t.is(clock.pendingTimers, 1);
  await port.stop();
  t.is(clock.pendingTimers, 0, 'the reopen was cancelled');
  const attempts = cable.openAttempts;
  cable.plug();
  await clock.advanceAsync(10_000);
  t.is(cable.openAttempts, attempts);
  t.false(port.isOpen);
});

/** Steps the clock to each reopen of `delays` in turn, checking that no
 * attempt comes a millisecond early and that each one comes on time (and
 * fails: the cable is out) and schedules the next. */
async function retriesAt(
  t: ExecutionContext,
  cable: Cable,
  clock: FakeClock,
  delays: readonly number[],
): Promise<void> {
  for (const delay of delays) {
    await waitFor(() => clock.pendingTimers === 1, 'the next reopen scheduled');
    const before = cable.openAttempts;
    clock.advance(delay - 1);
    t.is(cable.openAttempts, before, `no attempt before ${delay} ms`);
    clock.advance(1);
    t.is(cable.openAttempts, before + 1, `an attempt at ${delay} ms`);
  }
  await waitFor(() => clock.pendingTimers === 1, 'the next reopen scheduled');
}

/** A frame whose CRC is right but whose type byte is no link type. */
function frameOfUnknownType(): Buffer {
  // type 0x7f, payload 0x44, CRC-16/CCITT-FALSE over both; no zero byte, so COBS is one code byte.
  const raw = Buffer.from([0x7f, 0x44, 0, 0]);
  let crc = 0xffff;
  for (const byte of raw.subarray(0, 2)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  raw.writeUInt16BE(crc, 2);
  if (raw.includes(0)) throw new Error('pick another payload: the CRC holds a zero');
  return Buffer.concat([Buffer.from([raw.length + 1]), raw, Buffer.from([0x00])]);
}
