// lib/capture/capture-file.ts: a pcapng file written as records come,
// rotated as dumpcap names its ring buffer, each rotated file whole on its
// own, and a write error that stops the capture once while the link goes
// on. Files are read back with the tests' own reader (test/helpers/pcapng.ts)
// and, where tshark is installed, by tshark itself.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { CaptureFile, CaptureFileError } from '../../lib/capture/capture-file.js';
import { CaptureDirection, LinkCapture } from '../../lib/capture/link-capture.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { LINKTYPE_PARKBENCH } from '../../lib/capture/record.js';
import { readCapture } from '../helpers/pcapng.js';
import { testNeeding } from '../helpers/requires.js';
import { dissect } from '../helpers/tshark.js';

const withTshark = testNeeding('tshark', test);

function folder(t: ExecutionContext): string {
  const made = mkdtempSync(join(tmpdir(), 'pb-capture-file-'));
  t.teardown(() => rmSync(made, { recursive: true, force: true }));
  return made;
}

/** A clock that moves one millisecond a record, from 2026-01-01T00:00:00Z. */
function stepClock(): () => bigint {
  let now = 1_767_225_600_000_000n;
  return () => (now += 1000n);
}

const at = new Date('2026-01-01T10:20:30Z');

test('one file: the section names the tool, an interface per link as it first records, every record in order', (t) => {
  const path = join(folder(t), 'run.pcapng');
  const file = new CaptureFile({ path, application: 'parkbench 1.4.0 sim' });
  const nowMicros = stepClock();
  const serial = new LinkCapture(file, 'serial', '/dev/ttyUSB0', { description: 'parkbench sim', nowMicros });
  const mqtt = new LinkCapture(file, 'mqtt', 'mqtt://127.0.0.1:1883', { nowMicros });
  serial.wire(CaptureDirection.toBox, Buffer.from([1, 2, 0]), { moduleId: 9101 });
  mqtt.message(CaptureDirection.fromBox, 'parkbench/boxes/9101/state', Buffer.from('{}'), 9101);
  serial.wire(CaptureDirection.fromBox, Buffer.from([0]), { notAFrame: true });
  file.close();
  t.deepEqual(file.files, [path]);
  t.is(file.packets, 3);
  const read = readCapture(path);
  t.is(read.application, 'parkbench 1.4.0 sim');
  t.false(read.truncated);
  t.deepEqual(read.interfaces, [
    { name: 'serial:/dev/ttyUSB0', description: 'parkbench sim', linkType: LINKTYPE_PARKBENCH },
    { name: 'mqtt:mqtt://127.0.0.1:1883', description: undefined, linkType: LINKTYPE_PARKBENCH },
  ]);
  t.deepEqual(
    read.packets.map((packet) => [
      packet.interfaceName,
      packet.timestampMicros,
      packet.record?.kind,
      packet.record?.notAFrame,
    ]),
    [
      ['serial:/dev/ttyUSB0', 1_767_225_600_001_000n, 1, false],
      ['mqtt:mqtt://127.0.0.1:1883', 1_767_225_600_002_000n, 3, false],
      ['serial:/dev/ttyUSB0', 1_767_225_600_003_000n, 1, true],
    ],
  );
  serial.wire(CaptureDirection.toBox, Buffer.from([0]));
  t.is(file.packets, 3, 'records after close are dropped');
});

/** Records `count` packets of 100 bytes of data on two links, alternating. */
function recordMany(file: CaptureFile, count: number): void {
  const nowMicros = stepClock();
  const serial = new LinkCapture(file, 'serial', '/dev/ttyUSB0', { nowMicros });
  const ble = new LinkCapture(file, 'ble', 'PB-9101', { nowMicros });
  for (let index = 0; index < count; index += 1) {
    const data = Buffer.alloc(100, index);
    if (index % 3 === 2) ble.chunk(CaptureDirection.fromBox, data, { moduleId: 9101 });
    else serial.wire(CaptureDirection.toBox, data, { moduleId: 9101 });
  }
}

test('records wait at most flushAfterMs to be written, together; past 64 KiB at once; close() writes the rest', (t) => {
  const path = join(folder(t), 'run.pcapng');
  const clock = new FakeClock();
  const file = new CaptureFile({ path, application: 'test', flushAfterMs: 50, clock });
  const emptySize = statSync(path).size;
  t.is(readCapture(path).interfaces.length, 0, 'a new file reads as a capture at once');
  const link = new LinkCapture(file, 'serial', '/dev/ttyUSB0', { nowMicros: stepClock() });
  link.wire(CaptureDirection.toBox, Buffer.from([1, 2, 0]));
  link.wire(CaptureDirection.fromBox, Buffer.from([3, 4, 0]));
  t.is(file.packets, 2);
  t.is(statSync(path).size, emptySize, 'nothing written before the wait is over');
  clock.advance(49);
  t.is(statSync(path).size, emptySize);
  clock.advance(1);
  t.is(readCapture(path).packets.length, 2, 'both written when it is');
  t.is(clock.pendingTimers, 0);
  // 700 records of 100 bytes pass 64 KiB: written without waiting.
  for (let index = 0; index < 700; index += 1) link.wire(CaptureDirection.toBox, Buffer.alloc(100, 1));
  const written = readCapture(path).packets.length;
  t.true(written > 2 + 400 && written < 702, `${written} packets in the file`);
  link.wire(CaptureDirection.fromBox, Buffer.from([5, 0]));
  file.close();
  t.is(clock.pendingTimers, 0, 'close() leaves no timer behind');
  const read = readCapture(path);
  t.false(read.truncated);
  t.is(read.packets.length, 703);
});

test("rotation: dumpcap's names, each file under the limit and whole on its own, with every interface", (t) => {
  const directory = folder(t);
  const file = new CaptureFile({
    path: join(directory, 'run.pcapng'),
    maxBytes: 1000,
    application: 'test',
    now: () => at,
  });
  recordMany(file, 30);
  file.close();
  t.true(file.files.length > 3);
  t.deepEqual(
    file.files.map((path) => basename(path)),
    file.files.map((_, index) => `run_${String(index + 1).padStart(5, '0')}_20260101102030.pcapng`),
  );
  const packets = file.files.flatMap((path) => {
    t.true(statSync(path).size <= 1000, path);
    const read = readCapture(path);
    t.false(read.truncated);
    t.is(read.application, 'test');
    return read.packets;
  });
  t.is(packets.length, 30);
  t.deepEqual(
    packets.map((packet) => packet.bytes[12]),
    Array.from({ length: 30 }, (_, index) => index),
    'every record once, in order',
  );
  // From the first file on which BLE recorded, every file describes both links (the serial first).
  const interfaces = file.files.map((path) => readCapture(path).interfaces.map((each) => each.name));
  t.deepEqual(interfaces.at(-1), ['serial:/dev/ttyUSB0', 'ble:PB-9101']);
});

test('rotation with maxFiles: a ring of the newest files, the older ones removed', (t) => {
  const directory = folder(t);
  const file = new CaptureFile({
    path: join(directory, 'ring'),
    maxBytes: 700,
    maxFiles: 2,
    application: 'test',
    now: () => at,
  });
  recordMany(file, 40);
  file.close();
  t.is(file.files.length, 2);
  const last = readCapture(file.files[1] ?? '');
  const numbers = file.files.map((path) => Number(/_(\d{5})_/.exec(basename(path))?.[1]));
  t.true((numbers[0] ?? 0) > 2);
  t.is(numbers[1], (numbers[0] ?? 0) + 1);
  t.true(
    file.files.every((path) => path.endsWith('.pcapng')),
    'a name without an extension gets .pcapng',
  );
  for (let number = 1; number < (numbers[0] ?? 0); number += 1)
    t.false(existsSync(join(directory, `ring_${String(number).padStart(5, '0')}_20260101102030.pcapng`)));
  t.is(last.packets.at(-1)?.bytes[12], 39, 'the newest record is in the newest file');
});

withTshark('each rotated file opens alone in tshark, its interfaces and packets with it', async (t) => {
  const directory = folder(t);
  const file = new CaptureFile({
    path: join(directory, 'run.pcapng'),
    maxBytes: 800,
    application: 'test',
    now: () => at,
  });
  recordMany(file, 20);
  file.close();
  let total = 0;
  for (const path of file.files) {
    const packets = await dissect(path, ['frame.interface_name', 'parkbench.record']);
    t.true(packets.length > 0);
    t.true(packets.every((packet) => /^(serial|ble):/.test(packet.fields['frame.interface_name']?.[0] ?? '')));
    total += packets.length;
  }
  t.is(total, 20);
});

test('an old file of the ring removed by someone else does not stop the capture', (t) => {
  const directory = folder(t);
  const stops: Error[] = [];
  const file = new CaptureFile({
    path: join(directory, 'run.pcapng'),
    maxBytes: 700,
    maxFiles: 2,
    application: 'test',
    onStop: (error) => stops.push(error),
  });
  recordMany(file, 10);
  unlinkSync(file.files[0] ?? '');
  recordMany(file, 10);
  file.close();
  t.deepEqual(stops, []);
  t.is(file.packets, 20);
  t.is(file.files.length, 2);
});

test('options are checked, and a file that cannot be opened says which and why', (t) => {
  const directory = folder(t);
  t.throws(() => new CaptureFile({ path: join(directory, 'a'), maxBytes: 0, application: 'test' }), {
    instanceOf: RangeError,
  });
  t.throws(() => new CaptureFile({ path: join(directory, 'a'), maxBytes: 1000, maxFiles: 1.5, application: 'test' }), {
    instanceOf: RangeError,
  });
  const missing = join(directory, 'no-such-folder', 'run.pcapng');
  t.throws(() => new CaptureFile({ path: missing, application: 'test' }), {
    instanceOf: CaptureFileError,
    message: new RegExp(`capture file ${missing}: .*ENOENT`),
  });
});

const captureFileModule = fileURLToPath(new URL('../../lib/capture/capture-file.ts', import.meta.url));
const linkCaptureModule = fileURLToPath(new URL('../../lib/capture/link-capture.ts', import.meta.url));

/** Records into a capture file in a child process whose files may not pass
 * `limitKib` KiB (RLIMIT_FSIZE, bash's ulimit -f): past it, write(2) fails
 * with EFBIG. Node ignores SIGXFSZ, which would otherwise end the process. */
function recordUnderLimit(
  path: string,
  limitKib: number,
): Promise<{ stops: string[]; packets: number; threw: boolean }> {
  const script = `
    import { CaptureFile } from ${JSON.stringify(captureFileModule)};
    import { LinkCapture, CaptureDirection } from ${JSON.stringify(linkCaptureModule)};
    const stops = [];
    const file = new CaptureFile({ path: ${JSON.stringify(path)}, application: 'test', flushAfterMs: 0, onStop: (error) => stops.push(error.message) });
    const link = new LinkCapture(file, 'serial', '/dev/ttyUSB0');
    let threw = false;
    try {
      // Ten records, then a wait in which they are written.
      for (let index = 0; index < 200; index += 1) {
        link.wire(CaptureDirection.toBox, Buffer.alloc(100, 7), { moduleId: 9101 });
        if (index % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      file.close();
    } catch {
      threw = true;
    }
    console.log(JSON.stringify({ stops, packets: file.packets, threw, stopped: file.stopped?.message }));
  `;
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-c', `ulimit -f ${limitKib} && exec "$0" --import=tsx --input-type=module -e "$1"`, process.execPath, script],
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`the recording child failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as { stops: string[]; packets: number; threw: boolean });
      },
    );
  });
}

test('a write error (the file size limit) stops the capture with one onStop; later records are dropped without a throw', async (t) => {
  const path = join(folder(t), 'limited.pcapng');
  const { stops, packets, threw } = await recordUnderLimit(path, 4);
  t.false(threw);
  t.is(stops.length, 1);
  t.regex(stops[0] ?? '', /EFBIG/);
  t.true(packets > 0 && packets < 200, `${packets} packets`);
  t.is(statSync(path).size, 4 * 1024);
  // Every whole block before the limit reads; at most the last one is cut.
  const read = readCapture(readFileSync(path));
  t.is(read.packets.length, packets);
  t.true(read.packets.every((packet) => packet.record?.moduleId === 9101));
});
