// The suite's BLE target, noble over the simulator's virtual radio in
// process (noble's bindings injection point): the same cases pass over BLE,
// status reports notified while connected show the barrier cycle, and the
// garbage chunks reach the box and are dropped. A signed parking's box too:
// ACCESS_SIGNED, SET_ISSUER and REVOKE frames travel in several chunks.
import test, { type ExecutionContext } from 'ava';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import type { SuiteReport } from '../../conformance/case-result.js';
import { CANNOT_RESTART } from '../../conformance/cases/power-cycle-case.js';
import { runSuite } from '../../conformance/run-suite.js';
import { bleTarget, openedBleTarget, simOnRadio } from '../helpers/conformance-ble-sim.js';
import { boxFile, FAST_BARRIER, keysOf, reportRows, type BoxFile } from '../helpers/conformance-fixtures.js';

/** Only the power cycle does not pass: this target cannot restart the box. */
function assertAllPassed(t: ExecutionContext, report: SuiteReport, box: BoxFile): void {
  t.deepEqual(
    report.results.filter((entry) => entry.result !== 'pass').map(({ result, reason }) => ({ result, reason })),
    [{ result: 'skip', reason: CANNOT_RESTART }],
  );
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(report.summary.target, 'ble');
}

test('a simulated box on the virtual radio passes every case over BLE', async (t) => {
  const box = await boxFile(t, 4301, { direction: 'exit' });
  const { simulation, bindings } = await simOnRadio(t, box, { barrierTimings: FAST_BARRIER });
  const target = await openedBleTarget(t, bindings, box);
  const sources = new Set<string>();
  target.onBarrier((observation) => sources.add(observation.source));
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 77 },
  });
  assertAllPassed(t, report, box);
  // The barrier's cycle came as notified status reports, not only responses.
  t.true(sources.has('report'));
  t.true((simulation.boxes[0]?.ble?.counters.badChunks ?? 0) > 0);
});

test("a signed parking's box on the virtual radio passes every case over BLE, in chunks of a small MTU", async (t) => {
  const box = await boxFile(t, 4303, keysOf('signed'));
  // MTU 64: a SET_ISSUER (158 bytes) takes three chunks, an ACCESS_SIGNED (101) two.
  const { simulation, bindings } = await simOnRadio(t, box, { barrierTimings: FAST_BARRIER, mtu: 64 });
  const target = await openedBleTarget(t, bindings, box);
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000 },
  });
  assertAllPassed(t, report, box);
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKey, box.provisioning.issuerKey);
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKeyPrevious, box.provisioning.issuerKeyPrevious);
});

test('a MAC address outside the allow-list finds no box: open fails with one line', async (t) => {
  const box = await boxFile(t, 4302);
  const { bindings } = await simOnRadio(t, box);
  const target = await bleTarget(bindings, box, { mac: '00:00:00:00:00:01', discoverTimeoutMs: 300 });
  await t.throwsAsync(() => target.open(), {
    message: 'no box advertising PB-4302 at 00:00:00:00:00:01 within 300 ms',
  });
});
