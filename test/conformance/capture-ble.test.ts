// The suite's captures over BLE, in process: the simulator on its virtual
// radio at a small MTU, the suite's BLE target recording through an
// OpeningLinkCapture over the run's sink, as `parkbench conformance --ble
// --capture-dir` wires them. Each case's file holds the chunks both ways,
// the frame they make after the last one, and what the suite read in it.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FrameKind } from '../../firmware-protocol/index.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { OpeningLinkCapture } from '../../conformance/capture/opening-link-capture.js';
import { RunCapture } from '../../conformance/capture/run-capture.js';
import { suiteKeys } from '../../conformance/capture/suite-keys.js';
import { runSuite } from '../../conformance/run-suite.js';
import { freshIssuers } from '../../conformance/suite-context.js';
import { CaptureFile } from '../../lib/capture/capture-file.js';
import { CaptureDirection, RecordKind } from '../../lib/capture/record.js';
import { systemClock } from '../../lib/clock.js';
import { capturedRecords, framesAndOpened } from '../helpers/conformance-capture.js';
import { openedBleTarget, simOnRadio } from '../helpers/conformance-ble-sim.js';
import { boxFile, FAST_BARRIER, keysOf } from '../helpers/conformance-fixtures.js';

test("over BLE: each case's file holds its chunks, the frames they make, and an opened record after each frame", async (t) => {
  const box = await boxFile(t, 4310, keysOf('signed'));
  const folder = await mkdtemp(join(tmpdir(), 'pb-capture-ble-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  // MTU 64: a SET_ISSUER (158 bytes) takes three chunks, an ACCESS_SIGNED (101) two.
  const { bindings } = await simOnRadio(t, box, { barrierTimings: FAST_BARRIER, mtu: 64 });
  const suiteBox = boxUnderTest(box.provisioning);
  const issuers = freshIssuers();
  const capture = new RunCapture({
    whole: new CaptureFile({ path: join(folder, 'run.pcapng'), application: 'parkbench test conformance' }),
    caseDirectory: folder,
    application: 'parkbench test conformance',
  });
  t.teardown(() => capture.close());
  const target = await openedBleTarget(t, bindings, box, {
    capture: new OpeningLinkCapture(capture, 'ble', 'PB-4310', suiteKeys(suiteBox, issuers)),
  });
  const report = await runSuite({
    box: suiteBox,
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 77 },
    skipWearing: true,
    capture,
    issuers,
  });
  capture.close();
  t.is(report.summary.failed, 0, JSON.stringify(report.results.filter((entry) => entry.result === 'fail')));

  const signedOpens = report.results.find((entry) => entry.name.startsWith('valid ACCESS_SIGNED opens'))?.capture;
  const { contents, records } = capturedRecords(signedOpens ?? '');
  t.deepEqual(
    contents.interfaces.map((link) => link.name),
    ['ble:PB-4310'],
  );
  const frames = framesAndOpened(records);
  t.true(frames.length >= 2);
  for (const { frame, record, opened } of frames) {
    // The chunks just before the frame, their header bytes dropped, are the frame.
    const index = records.indexOf(record);
    const chunks = [];
    for (let at = index - 1; at >= 0; at--) {
      const before = records[at];
      if (before?.kind !== RecordKind.chunk || before.direction !== record.direction) break;
      chunks.unshift(before);
      if (before.data[0] === 0 || before.data[0] === 0x80) break;
    }
    t.deepEqual(Buffer.concat(chunks.map((chunk) => chunk.data.subarray(1))), frame);
    t.is(opened?.direction, record.direction);
    t.is(opened?.data[1], 0, 'opened under the suite’s keys, or its tag verified');
  }
  // The ACCESS_SIGNED, signed by the suite's issuer, opened; in two chunks at MTU 64.
  const signed = frames.find(({ opened }) => opened?.data[0] === FrameKind.ACCESS_SIGNED);
  t.is(signed?.record.direction, CaptureDirection.toBox);
  t.is(signed?.frame.length, 101);

  // The link case's garbage: three chunks to the box in a row, no frame record among them.
  const link = report.results.find((entry) => entry.name.startsWith('garbage on the link'))?.capture ?? '';
  const linkRecords = capturedRecords(link).records.filter((record) => record.direction === CaptureDirection.toBox);
  const first = linkRecords.findIndex((record) => Buffer.from(record.data).toString('hex') === '05dead');
  t.deepEqual(
    linkRecords
      .slice(first, first + 3)
      .map((record) => [record.kind, Buffer.from(record.data).toString('hex'), record.notAFrame]),
    [
      [RecordKind.chunk, '05dead', true],
      [RecordKind.chunk, '83beef', true],
      [RecordKind.chunk, '0001010000', true],
    ],
  );
});
