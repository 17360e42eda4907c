// `parkbench conformance --capture-dir DIR --capture FILE` on a serial
// cable: the real command line against `parkbench sim --bug accept-expired`
// on a real pty pair (socat). Each case's file holds the wire bytes both
// ways, COBS and delimiter included, an opened record after each run that
// carries a command, a response or a status report, the garbage of the link
// case marked not a frame; the whole run's file rotates by --capture-max-mb,
// and --junit attaches it, by the name rotation gave it, to the testsuite.
import avaTest from 'ava';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import { FrameKind, parseResponse, Status } from '../../firmware-protocol/index.js';
import { serialGarbage } from '../../conformance/targets/garbage.js';
import { CaptureDirection, RecordKind } from '../../lib/capture/record.js';
import { capturedRecords, framesAndOpened, holdsAny } from '../helpers/conformance-capture.js';
import { assertWellFormedXml, RUN_CHECKS, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformanceOnSerial, simOnPty } from '../helpers/conformance-serial-sim.js';
import { testNeeding } from '../helpers/requires.js';

const test = testNeeding('socat', avaTest);

const EXPIRED_CASE = 'not_after just outside the skew';

test('a case file per case on a serial cable: wire bytes both ways, each frame opened, the garbage not a frame', async (t) => {
  const { box, pair } = await simOnPty(t, 4280, ['--bug', 'accept-expired']);
  const cases = join(box.directory, 'cases');
  // The whole run's files in a folder whose name XML must escape.
  const runFolder = join(box.directory, 'R&D');
  await mkdir(runFolder);
  const junit = join(box.directory, 'junit.xml');
  const result = await conformanceOnSerial(box, pair.b, [
    '--skip-wearing',
    '--capture-dir',
    cases,
    '--capture',
    join(runFolder, 'run.pcapng'),
    '--capture-max-mb',
    '1',
    '--capture-files',
    '2',
    '--junit',
    junit,
  ]);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.deepEqual(
    report.results.filter((entry) => entry.result === 'fail').map((entry) => entry.name),
    [EXPIRED_CASE],
  );
  // No file for a case that never ran (--skip-wearing), put nothing on the link (the power
  // cycle skips itself), or for the checks over the whole run.
  t.is(
    report.results.filter((entry) => entry.capture === undefined).length,
    report.results.filter((entry) => entry.result === 'skip').length + RUN_CHECKS,
  );
  t.is((await readdir(cases)).length, report.results.length - report.summary.skipped - RUN_CHECKS);

  // The failing case: the ACCESS run to the box, the box's answer run, each followed by what the suite read.
  const failing = report.results.find((entry) => entry.name === EXPIRED_CASE)?.capture ?? '';
  t.is(
    basename(failing),
    `${String(report.results.findIndex((entry) => entry.name === EXPIRED_CASE) + 1).padStart(2, '0')}-not-after-just-outside-the-skew.pcapng`,
  );
  const { contents, records } = capturedRecords(failing);
  t.deepEqual(
    contents.interfaces.map(({ name, description }) => ({ name, description })),
    [{ name: `serial:${pair.b}`, description: 'parkbench conformance' }],
  );
  t.true(records.every((record) => record.kind === RecordKind.wire || record.kind === RecordKind.opened));
  const frames = framesAndOpened(records);
  t.true(frames.length >= 2);
  for (const { record, opened } of frames) {
    t.is(opened?.direction, record.direction, 'an opened record follows each frame');
    t.is(opened?.data[1], 0, 'opened under the suite’s keys, or its tag verified');
    t.is(record.data.at(-1), 0, 'the run ends with its delimiter');
  }
  const access = frames.filter(({ opened }) => opened?.data[0] === FrameKind.ACCESS);
  t.deepEqual(
    access.map(({ record }) => record.direction),
    [CaptureDirection.toBox, CaptureDirection.fromBox],
  );
  // The box's answer is OK where EXPIRED was due; the opened command shows its window.
  t.is(parseResponse(access[1]?.frame ?? Buffer.alloc(0)).status, Status.OK);
  const body = Buffer.from(access[0]?.opened?.data ?? []);
  t.true(body.readUInt32BE(2) < body.readUInt32BE(6), 'not_before < not_after');
  t.is(body[12], 1, 'one module');
  t.is(body.readUInt32BE(13), 4280);

  // The link case: the garbage, run by run, each marked not a frame (the response
  // link frame sent the wrong way too); then a command the box answers.
  const link = report.results.find((entry) => entry.name.startsWith('garbage on the link'))?.capture ?? '';
  const linkRecords = capturedRecords(link).records;
  const garbage = linkRecords.filter((record) => record.direction === CaptureDirection.toBox && record.notAFrame);
  t.deepEqual(Buffer.concat(garbage.map((record) => record.data)), Buffer.concat(serialGarbage()));
  t.is(garbage.length, serialGarbage().length);
  t.true(framesAndOpened(linkRecords).some(({ record }) => record.direction === CaptureDirection.fromBox));

  // The whole run, in one rotated file (under a MiB): its first answer, status
  // reports (0x82) opened as answering no command, and no key anywhere.
  const runFiles = await readdir(runFolder);
  t.is(runFiles.length, 1);
  t.regex(runFiles[0] ?? '', /^run_00001_\d{14}\.pcapng$/);
  const whole = join(runFolder, runFiles[0] ?? '');
  const runFrames = framesAndOpened(capturedRecords(whole).records);
  t.is(runFrames[0]?.opened?.data[0], FrameKind.BATTERY_QUERY);
  const reports = runFrames.filter(
    ({ record, frame }) => record.direction === CaptureDirection.fromBox && frame[2] === 0,
  );
  t.true(reports.length >= 1, 'status reports in the run');
  t.true(reports.every(({ opened }) => opened?.data[0] === 0 && opened.data[1] === 0));
  const keys = [box.provisioning.boxKey, box.provisioning.parkingKey ?? Buffer.alloc(16)];
  t.false(holdsAny(whole, keys));
  t.false(holdsAny(failing, keys));

  // The JUnit report: the failing case's file in its testcase; the run's file, as rotation
  // named it (not the --capture argument), escaped, in the testsuite's own <system-out>.
  const xml = await readFile(junit, 'utf8');
  assertWellFormedXml(xml);
  t.true(isAbsolute(box.directory) && !/[&<>"']/.test(box.directory));
  const escapedWhole = `${box.directory}/R&amp;D/${runFiles[0] ?? ''}`;
  t.is(/\n {4}<system-out>\[\[ATTACHMENT\|([^\]]+)\]\]<\/system-out>\n {2}<\/testsuite>/.exec(xml)?.[1], escapedWhole);
  t.is(xml.split('[[ATTACHMENT|').length - 1, report.results.filter((entry) => entry.capture !== undefined).length + 1);
  const failingTestcase = xml.split('<testcase ').find((testcase) => testcase.includes(`name="${EXPIRED_CASE}"`));
  t.true(failingTestcase?.includes(`<system-out>[[ATTACHMENT|${failing}]]</system-out>`), 'the failing case attached');
});
