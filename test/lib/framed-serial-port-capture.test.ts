// FramedSerialPort's capture on serialport's mock binding: what it records
// of what it writes and reads, in which order against the frames it passes
// on, and what it holds when the port closes. (Over a real pty pair and the
// command line: test/simulator/sim-capture.test.ts.)
import test, { type ExecutionContext } from 'ava';
import { SerialPortMock } from 'serialport';
import { SerialPortStream } from '@serialport/stream';
import { LinkType, encodeLinkFrame } from '../../firmware-protocol/index.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { CaptureDirection, LinkCapture } from '../../lib/capture/link-capture.js';
import type { CaptureRecord } from '../../lib/capture/record.js';
import type { CaptureInterface, CaptureSink } from '../../lib/capture/sink.js';
import { FramedSerialPort, type SerialPortFactory } from '../../lib/framed-serial-port.js';
import { recordWords } from '../helpers/capture-records.js';
import { waitFor } from '../helpers/wait.js';

/** A sink that keeps what it is given, and the frames the port passed on, in one sequence. */
class Timeline implements CaptureSink {
  readonly entries: (string | { on: CaptureInterface; record: CaptureRecord })[] = [];

  record(on: CaptureInterface, _timestampMicros: bigint, record: CaptureRecord): void {
    this.entries.push({ on, record });
  }

  get records(): CaptureRecord[] {
    return this.entries.flatMap((entry) => (typeof entry === 'string' ? [] : [entry.record]));
  }

  /** `to wire`, `from wire!`, and `frame` where the port passed one on. */
  get words(): string[] {
    return this.entries.map((entry) =>
      typeof entry === 'string' ? entry : recordWords({ ...entry.record, notAFrame: entry.record.notAFrame === true }),
    );
  }
}

let paths = 0;

/** What the tests use of the mock binding's open port. */
interface MockBinding {
  emitData(data: Buffer): void;
  readonly port: { readonly data: Buffer };
}

function cablePort(t: ExecutionContext, reads: CaptureDirection, moduleId?: () => number | undefined) {
  const path = `/dev/ttyCAPTURE${paths++}`;
  SerialPortMock.binding.createPort(path, { record: true });
  let stream: SerialPortStream | undefined;
  const createPort: SerialPortFactory = ({ baudRate }) => {
    stream = new SerialPortStream({ binding: SerialPortMock.binding, path, baudRate, autoOpen: false });
    return stream;
  };
  const timeline = new Timeline();
  const link = new LinkCapture(timeline, 'serial', path);
  const port = new FramedSerialPort({
    target: { path, baudRate: 115_200 },
    clock: new FakeClock(),
    createPort,
    capture: { link, reads, ...(moduleId === undefined ? {} : { moduleId }) },
  });
  port.on('frame', (frame) => timeline.entries.push(`frame ${frame.type.toString(16)}`));
  t.teardown(() => port.stop());
  /** The other end sends bytes down the cable. */
  const binding = (): MockBinding => {
    const open = stream?.port as MockBinding | undefined;
    if (open === undefined) throw new Error('the port is not open');
    return open;
  };
  const send = (bytes: Buffer): void => binding().emitData(bytes);
  /** Bytes sent that the port has not read yet. */
  const unread = (): number => binding().port.data.length;
  return { port, timeline, send, unread };
}

test('each run read is recorded before the frame it makes is passed on; runs that make none are marked', async (t) => {
  const box: { moduleId?: number } = {};
  const { port, timeline, send } = cablePort(t, CaptureDirection.fromBox, () => box.moduleId);
  await port.start();
  const report = encodeLinkFrame(LinkType.STATUS_REPORT, Buffer.from([1, 2, 3]));
  const response = encodeLinkFrame(LinkType.RESPONSE, Buffer.from([4, 5, 6]));
  // Garbage, two frames and the start of a third, in one read.
  send(Buffer.concat([Buffer.from([0x09, 0x09, 0x00]), report, response, Buffer.from([0x07])]));
  await waitFor(() => timeline.entries.length === 5, 'the runs and frames');
  t.deepEqual(timeline.words, ['from wire!', 'from wire', 'frame 82', 'from wire', 'frame 81']);
  t.deepEqual(Buffer.from(timeline.records[1]?.data ?? []), report);
  t.is(timeline.records[0]?.moduleId, undefined, 'no module id before it is known');
  box.moduleId = 9001;
  send(Buffer.from([0x08, 0x00]));
  await waitFor(() => timeline.entries.length === 6, 'the run that ends the held byte');
  t.deepEqual(Buffer.from(timeline.records.at(-1)?.data ?? []), Buffer.from([0x07, 0x08, 0x00]));
  t.is(timeline.records.at(-1)?.moduleId, 9001);
  t.is(timeline.records.at(-1)?.notAFrame, true);
});

test('a frame written is one wire record the other way; raw bytes are split and marked as read bytes are', async (t) => {
  const { port, timeline } = cablePort(t, CaptureDirection.toBox, () => 9002);
  await port.start();
  t.true(port.send(LinkType.RESPONSE, Buffer.from([1, 2])));
  t.true(port.writeRaw(Buffer.from([0x01, 0x00, 0x05, 0x06])));
  t.deepEqual(timeline.words, ['from wire', 'from wire!', 'from wire!']);
  t.deepEqual(Buffer.from(timeline.records[0]?.data ?? []), encodeLinkFrame(LinkType.RESPONSE, Buffer.from([1, 2])));
  t.deepEqual(
    timeline.records.slice(1).map((record) => Buffer.from(record.data).toString('hex')),
    ['0100', '0506'],
  );
  t.true(timeline.records.every((record) => record.moduleId === 9002));
});

test('bytes held without a delimiter when the port closes are recorded as no frame', async (t) => {
  const { port, timeline, send, unread } = cablePort(t, CaptureDirection.toBox);
  await port.start();
  send(Buffer.from([0x0a, 0x0b, 0x0c]));
  await waitFor(() => unread() === 0, 'the bytes read by the port');
  await new Promise((resolve) => setImmediate(resolve)); // and handed to the capture
  t.deepEqual(timeline.words, [], 'nothing is recorded while a run waits for its delimiter');
  await port.stop();
  t.deepEqual(timeline.words, ['to wire!']);
  t.deepEqual(Buffer.from(timeline.records[0]?.data ?? []), Buffer.from([0x0a, 0x0b, 0x0c]));
});
