// The suite's capture parts, in process: the run's sink (the whole run's
// file, its rotated files as the JUnit report attaches them, and the running
// case's), the case files' names, and the opened
// record after each frame (a response matched to the command it answers,
// a late one too; a status report; an answer to no command the suite sent).
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  Barrier,
  Direction,
  encodeLinkFrame,
  FrameKind,
  LinkType,
  sealResponse,
  Status,
  type ResponseFields,
} from '../../firmware-protocol/index.js';
import { caseFileName } from '../../conformance/capture/case-file-name.js';
import { OpeningLinkCapture } from '../../conformance/capture/opening-link-capture.js';
import { RunCapture } from '../../conformance/capture/run-capture.js';
import { renderJunit } from '../../conformance/reports/junit.js';
import { CaptureFile } from '../../lib/capture/capture-file.js';
import { CaptureDirection, RecordKind } from '../../lib/capture/record.js';
import { capturedRecords } from '../helpers/conformance-capture.js';
import { access, batteryQuery, boxKey, otherKey, parkingKey } from '../helpers/protocol-fixtures.js';

const APPLICATION = 'parkbench test conformance';

function folder(t: { teardown(fn: () => void): void }): string {
  const made = mkdtempSync(join(tmpdir(), 'pb-capture-parts-'));
  t.teardown(() => rmSync(made, { recursive: true, force: true }));
  return made;
}

/** A response to `command` (null: a status report), sealed under `key`. */
function answer(command: Buffer | null, fields: Partial<ResponseFields> = {}, key: Uint8Array = boxKey): Buffer {
  return sealResponse(
    {
      status: Status.OK,
      kind: command?.[1] ?? 0,
      moduleId: 101,
      keyId: command?.readUInt32BE(2) ?? 0,
      boxSeq: 5,
      boxTime: 1_767_225_600,
      batteryMv: 3700,
      barrier: Barrier.CLOSED,
      direction: Direction.ENTRANCE,
      remaining: 0xff,
      ...fields,
    },
    key,
    command,
  );
}

test('case files are named by their row and their case, safe for any file system and never the same', (t) => {
  t.is(caseFileName(3, 'not_before just inside the skew'), '03-not-before-just-inside-the-skew.pcapng');
  t.is(
    caseFileName(41, "SET_ISSUER puts the box's issuer keys back"),
    '41-set-issuer-puts-the-box-s-issuer-keys-back.pcapng',
  );
  t.is(caseFileName(7, 'ACCESS/../../etc: "é" 0x21'), '07-access-etc-e-0x21.pcapng');
  t.is(caseFileName(120, '***'), '120-case.pcapng');
  t.true(caseFileName(1, 'x'.repeat(500)).length <= 3 + 80 + '.pcapng'.length);
});

test("the run's sink: every record in the whole run's file, a case's in its own file; a case that recorded nothing leaves none", (t) => {
  const directory = folder(t);
  const whole = new CaptureFile({ path: join(directory, 'run.pcapng'), application: APPLICATION });
  const sink = new RunCapture({ whole, caseDirectory: directory, application: APPLICATION });
  const link = new OpeningLinkCapture(sink, 'mqtt', 'mqtt://127.0.0.1:1883', { boxKey, parkingKeys: [parkingKey] });
  const first = batteryQuery(1);
  link.frame(CaptureDirection.toBox, first, 101);
  sink.begin(1, 'first case');
  const command = access();
  link.frame(CaptureDirection.toBox, command, 101);
  link.frame(CaptureDirection.fromBox, answer(command), 101);
  const firstCase = sink.end();
  sink.begin(2, 'a case that sends nothing');
  t.is(sink.end(), undefined);
  sink.close();
  t.is(firstCase, join(directory, '01-first-case.pcapng'));
  t.deepEqual(readdirSync(directory).sort(), ['01-first-case.pcapng', 'run.pcapng']);
  const inCase = capturedRecords(firstCase ?? '').records;
  t.deepEqual(
    inCase.map((record) => [record.direction, record.kind]),
    [
      [CaptureDirection.toBox, RecordKind.frame],
      [CaptureDirection.toBox, RecordKind.opened],
      [CaptureDirection.fromBox, RecordKind.frame],
      [CaptureDirection.fromBox, RecordKind.opened],
    ],
  );
  t.is(capturedRecords(join(directory, 'run.pcapng')).records.length, 2 + inCase.length);
});

test("the run's sink names the whole run's files as rotation left them, oldest first; --junit attaches those to the testsuite", (t) => {
  const directory = folder(t);
  const whole = new CaptureFile({
    path: join(directory, 'run.pcapng'),
    maxBytes: 600,
    maxFiles: 3,
    application: APPLICATION,
    now: () => new Date('2026-06-01T08:00:00Z'),
  });
  const sink = new RunCapture({ whole, application: APPLICATION });
  const link = new OpeningLinkCapture(sink, 'serial', '/dev/ttyB', { boxKey });
  for (let row = 1; row <= 20; row += 1) link.frame(CaptureDirection.toBox, batteryQuery(row), 101);
  sink.close();
  const names = sink.runFiles.map((path) => basename(path));
  t.is(names.length, 3);
  const first = Number(/^run_(\d{5})_20260601080000\.pcapng$/.exec(names[0] ?? '')?.[1]);
  t.true(first > 1, 'the oldest files were removed');
  t.deepEqual(
    names,
    [0, 1, 2].map((index) => `run_${String(first + index).padStart(5, '0')}_20260601080000.pcapng`),
  );
  t.deepEqual(readdirSync(directory).sort(), names);
  const xml = renderJunit(
    {
      results: [],
      summary: {
        target: 'serial',
        module_id: 101,
        total: 0,
        passed: 0,
        failed: 0,
        skipped: 0,
        ms: 0,
        control_seq: { first: 1, next: 1 },
      },
    },
    { runCaptures: sink.runFiles },
  );
  t.is(
    /<system-out>([^<]*)<\/system-out>\n {2}<\/testsuite>/.exec(xml)?.[1],
    sink.runFiles.map((path) => `[[ATTACHMENT|${path}]]`).join('\n'),
  );
});

test('a case file that cannot be opened stops the case files, said once; the whole run goes on', (t) => {
  const directory = folder(t);
  const cases = join(directory, 'cases');
  const whole = new CaptureFile({ path: join(directory, 'run.pcapng'), application: APPLICATION });
  const stops: Error[] = [];
  const sink = new RunCapture({
    whole,
    caseDirectory: cases,
    application: APPLICATION,
    onCaseFilesStopped: (error) => stops.push(error),
  });
  const link = new OpeningLinkCapture(sink, 'serial', '/dev/ttyB', { boxKey });
  for (const row of [1, 2]) {
    sink.begin(row, `case ${row}`);
    link.frame(CaptureDirection.toBox, batteryQuery(row), 101);
    t.is(sink.end(), undefined);
  }
  sink.close();
  t.is(stops.length, 1);
  t.regex(stops[0]?.message ?? '', /capture file .*cases\/01-case-1\.pcapng: ENOENT/);
  t.false(existsSync(cases));
  t.is(capturedRecords(join(directory, 'run.pcapng')).records.length, 4);
});

test('an opened response names the command it answers: the last one, an earlier one answered late, or none (a status report)', (t) => {
  const directory = folder(t);
  const whole = new CaptureFile({ path: join(directory, 'run.pcapng'), application: APPLICATION });
  const link = new OpeningLinkCapture(whole, 'serial', '/dev/ttyB', { boxKey, parkingKeys: [parkingKey] });
  const late = batteryQuery(1);
  const last = batteryQuery(2);
  const wire = (direction: CaptureDirection, type: LinkType, payload: Buffer): void =>
    link.wire(direction, encodeLinkFrame(type, payload), { moduleId: 101 });
  wire(CaptureDirection.toBox, LinkType.COMMAND, late);
  wire(CaptureDirection.toBox, LinkType.STATUS_REQUEST, Buffer.alloc(0));
  wire(CaptureDirection.toBox, LinkType.COMMAND, last);
  wire(CaptureDirection.toBox, LinkType.COMMAND, access({ key: otherKey }));
  wire(CaptureDirection.fromBox, LinkType.RESPONSE, answer(last));
  wire(CaptureDirection.fromBox, LinkType.RESPONSE, answer(late));
  wire(CaptureDirection.fromBox, LinkType.STATUS_REPORT, answer(null, { boxSeq: 6, barrier: Barrier.OPEN }));
  wire(CaptureDirection.fromBox, LinkType.RESPONSE, answer(null, { boxSeq: 7 }, otherKey));
  whole.close();
  const opened = capturedRecords(join(directory, 'run.pcapng'))
    .records.filter((record) => record.kind === RecordKind.opened)
    .map((record) => [record.direction, record.data[0], record.data[1]]);
  t.deepEqual(opened, [
    [CaptureDirection.toBox, FrameKind.BATTERY_QUERY, 0],
    // The status request carries no frame: nothing to open.
    [CaptureDirection.toBox, FrameKind.BATTERY_QUERY, 0],
    [CaptureDirection.toBox, FrameKind.ACCESS, 1],
    [CaptureDirection.fromBox, FrameKind.BATTERY_QUERY, 0],
    [CaptureDirection.fromBox, FrameKind.BATTERY_QUERY, 0],
    [CaptureDirection.fromBox, 0, 0],
    // Under another key: it verifies for no command the suite sent.
    [CaptureDirection.fromBox, 0, 1],
  ]);
});
