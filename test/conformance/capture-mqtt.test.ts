// `parkbench conformance --capture FILE --capture-dir DIR` over MQTT, through
// the real command line against a simulated box on a real aedes broker with
// a firmware bug, so one case fails: a file per case, each with the
// command and response messages of that case, the frame inside each, and
// an opened record after every frame; the whole run in one file; the JUnit
// report attaching each case's file; never a key.
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { FrameKind, parseResponse, Status } from '../../firmware-protocol/index.js';
import { CaptureDirection, RecordKind } from '../../lib/capture/record.js';
import { brokerForTest } from '../helpers/broker.js';
import { capturedRecords, framesAndOpened, holdsAny } from '../helpers/conformance-capture.js';
import { assertWellFormedXml, boxFile, keysOf, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformance, failedNames, simOnBroker } from '../helpers/conformance-mqtt-sim.js';

const REVOKED_CASE = 'a revoked key is REVOKED and spends no try';

test('--capture-dir: a file per case, the failing one showing its commands, answers and opened records; --capture: the whole run; --junit attaches each', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4260, keysOf('both'));
  await simOnBroker(t, box, broker.url, { bugs: ['accept-revoked'] });
  const cases = join(box.directory, 'cases');
  const whole = join(box.directory, 'run.pcapng');
  const junit = join(box.directory, 'junit.xml');
  const result = await conformance(box, broker.url, ['--capture-dir', cases, '--capture', whole, '--junit', junit]);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.deepEqual(failedNames(report), [REVOKED_CASE]);

  // A file for every case that put something on the link, named by its row; none for the checks.
  const captured = report.results.flatMap((entry, index) => {
    if (entry.capture === undefined) return [];
    t.is(dirname(entry.capture), cases);
    t.regex(basename(entry.capture), new RegExp(`^${String(index + 1).padStart(2, '0')}-[a-z0-9-]+\\.pcapng$`));
    return [entry.capture];
  });
  t.deepEqual((await readdir(cases)).sort(), captured.map((path) => path.slice(cases.length + 1)).sort());
  t.true(captured.length >= report.results.length - 6, `${captured.length} files of ${report.results.length} rows`);
  const revokedFile = report.results.find((entry) => entry.name === REVOKED_CASE)?.capture ?? '';
  t.regex(revokedFile, /\/\d\d-a-revoked-key-is-revoked-and-spends-no-try\.pcapng$/);

  // The failing case's file: each command and answer, as messages with their frames, each frame opened.
  const { contents, records } = capturedRecords(revokedFile);
  t.deepEqual(
    contents.interfaces.map(({ name, description }) => ({ name, description })),
    [{ name: `mqtt:${broker.url}`, description: 'parkbench conformance' }],
  );
  t.false(contents.truncated);
  t.true(contents.application?.startsWith('parkbench ') && contents.application.endsWith(' conformance'));
  const frames = framesAndOpened(records);
  for (const { record, opened } of frames) {
    const before = records[records.indexOf(record) - 1];
    t.is(before?.kind, RecordKind.message, 'each frame follows the message it came in');
    t.is(before?.direction, record.direction);
    t.is(opened?.direction, record.direction, 'an opened record follows each frame');
    t.is(opened?.moduleId, 4260);
  }
  const commands = frames.filter(({ record }) => record.direction === CaptureDirection.toBox);
  const answers = frames.filter(({ record }) => record.direction === CaptureDirection.fromBox);
  t.is(commands.length, answers.length);
  // Every command opened under the keys the suite holds (outcome 0), and every answer's tag verified.
  t.deepEqual(
    commands.map(({ opened }) => opened?.data[1]),
    commands.map(() => 0),
  );
  t.deepEqual(
    answers.map(({ opened }) => opened?.data[1]),
    answers.map(() => 0),
  );
  t.deepEqual(
    commands.slice(-4).map(({ opened }) => opened?.data[0]),
    [FrameKind.REVOKE, FrameKind.ACCESS_SIGNED, FrameKind.ACCESS_SIGNED, FrameKind.ACCESS],
  );
  // The answers the report shows: the buggy box opened for the revoked key.
  t.deepEqual(
    answers.slice(-4).map(({ frame }) => parseResponse(frame).status),
    [Status.OK, Status.OK, Status.NO_TRIES_LEFT, Status.NO_TRIES_LEFT],
  );
  t.deepEqual(
    answers.slice(-4).map(({ opened }) => opened?.data[0]),
    [FrameKind.REVOKE, FrameKind.ACCESS_SIGNED, FrameKind.ACCESS_SIGNED, FrameKind.ACCESS],
  );
  // The REVOKE's opened body: one entry, naming the key the next ACCESS_SIGNED carries.
  const revoke = commands.at(-4)?.opened?.data ?? Buffer.alloc(0);
  t.is(revoke[2], 1);
  t.is(Buffer.from(revoke).readUInt32BE(3), Buffer.from(commands.at(-3)?.frame ?? []).readUInt32BE(2));

  // The link case's garbage: messages on the command topic that carry no frame.
  const linkFile = report.results.find((entry) => entry.name.startsWith('garbage on the link'))?.capture ?? '';
  const linkRecords = capturedRecords(linkFile).records;
  const garbage = linkRecords.filter(
    (record, index) =>
      record.kind === RecordKind.message &&
      record.direction === CaptureDirection.toBox &&
      linkRecords[index + 1]?.kind !== RecordKind.frame,
  );
  t.deepEqual(
    garbage.map((record) => Buffer.from(record.data.subarray(2 + Buffer.from(record.data).readUInt16BE(0))).toString()),
    ['not json', '{"command": 42}', '{"context": {}}', '[]'],
  );

  // The whole run: the first answer before the cases, then every case's records, in time order.
  const run = capturedRecords(whole);
  const runFrames = framesAndOpened(run.records);
  t.is(runFrames[0]?.opened?.data[0], FrameKind.BATTERY_QUERY);
  const inCases = captured.reduce((sum, path) => sum + capturedRecords(path).records.length, 0);
  t.true(run.records.length > inCases, `${run.records.length} records in the run, ${inCases} in its cases`);
  const stamps = run.contents.packets.map((packet) => packet.timestampMicros);
  t.true(stamps.every((stamp, index) => index === 0 || stamp >= (stamps[index - 1] ?? 0n)));
  const nowMicros = BigInt(Date.now()) * 1000n;
  t.true((stamps[0] ?? 0n) > nowMicros - 600_000_000n && (stamps.at(-1) ?? 0n) <= nowMicros);

  // Never a key: neither K_box nor K_park is in any file.
  const keys = [box.provisioning.boxKey, box.provisioning.parkingKey ?? Buffer.alloc(16)];
  t.false(holdsAny(whole, keys));
  t.false(captured.some((path) => holdsAny(path, keys)));

  // The JUnit report: each case's file, by its absolute path, in its testcase's <system-out>.
  const xml = await readFile(junit, 'utf8');
  assertWellFormedXml(xml);
  // The testsuite's own <system-out> (below) left out of the last testcase's text.
  const testcases = xml
    .replace(/\n {4}<system-out>[^<]*<\/system-out>\n {2}<\/testsuite>/, '\n  </testsuite>')
    .split('<testcase ')
    .slice(1);
  t.is(testcases.length, report.results.length);
  report.results.forEach((entry, index) => {
    const attached = testcases[index]?.match(/<system-out>\[\[ATTACHMENT\|([^\]]+)\]\]<\/system-out>/)?.[1];
    t.is(attached, entry.capture, entry.name);
  });
  t.regex(testcases.find((testcase) => testcase.includes(REVOKED_CASE)) ?? '', /<\/failure>\n\s*<system-out>/);
  // The whole run's file, by its absolute path, in the testsuite's own <system-out>.
  t.is(
    /\n {4}<system-out>\[\[ATTACHMENT\|([^\]]+)\]\]<\/system-out>\n {2}<\/testsuite>/.exec(xml)?.[1],
    resolve(whole),
  );
});
