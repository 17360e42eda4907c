// The barrier side of the suite: the watch waits on the injected clock (and
// stops waiting when the run is interrupted), and a barrier that does not
// come down within --cycle-ms fails the cycle case.
import test from 'ava';
import { systemClock } from '../../lib/clock.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { Barrier } from '../../firmware-protocol/index.js';
import { BarrierWatch } from '../../conformance/barrier-watch.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { SuiteInterrupted } from '../../conformance/interrupted.js';
import { accessCases } from '../../conformance/cases/access-cases.js';
import { runSuite } from '../../conformance/run-suite.js';
import { openedBleTarget, simOnRadio } from '../helpers/conformance-ble-sim.js';
import { boxFile } from '../helpers/conformance-fixtures.js';

test('the watch finds a state seen after a mark, and gives up on the fake clock', async (t) => {
  const clock = new FakeClock();
  const watch = new BarrierWatch(clock);
  watch.add({ barrier: Barrier.CLOSED, at: clock.now(), source: 'report' });
  const mark = watch.mark;
  const opening = watch.waitFor(Barrier.OPENING, mark, 1_000);
  watch.add({ barrier: Barrier.OPENING, at: clock.now(), source: 'response' });
  t.is(await opening, 1);
  const closed = watch.waitFor(Barrier.CLOSED, 2, 1_000);
  await clock.advanceAsync(999);
  watch.add({ barrier: Barrier.CLOSED, at: clock.now(), source: 'state' });
  t.is(await closed, 2);
  const never = watch.waitFor(Barrier.FAULT, 0, 500);
  await clock.advanceAsync(500);
  t.is(await never, null);
  t.is(clock.pendingTimers, 0);
  t.deepEqual(
    watch.since(1).map((observation) => observation.barrier),
    [Barrier.OPENING, Barrier.CLOSED],
  );
});

test('an interrupted run stops waiting for the barrier at once, its timer cleared; a wait begun after the interruption ends at once too', async (t) => {
  const clock = new FakeClock();
  const interrupt = new AbortController();
  const watch = new BarrierWatch(clock, interrupt.signal);
  const waiting = watch.waitFor(Barrier.OPENING, 0, 3_600_000);
  t.is(clock.pendingTimers, 1);
  interrupt.abort();
  await t.throwsAsync(waiting, { instanceOf: SuiteInterrupted });
  t.is(clock.pendingTimers, 0);
  await t.throwsAsync(watch.waitFor(Barrier.CLOSED, 0, 3_600_000), { instanceOf: SuiteInterrupted });
  t.is(clock.pendingTimers, 0);
});

test('a barrier that stays open longer than --cycle-ms fails the cycle case', async (t) => {
  const box = await boxFile(t, 4501);
  const { bindings } = await simOnRadio(t, box, {
    barrierTimings: { openingMs: 50, openHoldMs: 60_000, closingMs: 50 },
  });
  const target = await openedBleTarget(t, bindings, box);
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 400, controlSeq: 1, keyIdBase: 1 },
    cases: accessCases.slice(0, 1),
  });
  const cycle = report.results[0];
  t.is(cycle?.result, 'fail');
  t.is(cycle?.got, '0x00');
  t.regex(cycle?.reason ?? '', /^CLOSED not shown after OPENING within --cycle-ms 400 ms \(seen: (OPENING > )+OPEN\)$/);
  t.is(report.summary.failed, 1);
});
