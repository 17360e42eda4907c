// runSoak over BLE: the suite's BLE target, noble over the simulator's
// virtual radio in process; the barrier seen in the status reports
// notified while connected, a signed box's frames in several chunks.
import test from 'ava';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { parseLimits } from '../../soak/limits.js';
import { runSoak } from '../../soak/run-soak.js';
import { openedBleTarget, simOnRadio } from '../helpers/conformance-ble-sim.js';
import { boxFile, keysOf } from '../helpers/conformance-fixtures.js';

test('over BLE, a box of a signed parking: 40 cycles, each OPEN and CLOSED from notified reports, its issuer keys put back', async (t) => {
  const box = await boxFile(t, 5501, keysOf('signed'));
  const { simulation, bindings } = await simOnRadio(t, box, {
    barrierTimings: { openingMs: 10, openHoldMs: 10, closingMs: 10 },
    settings: { batteryMv: 12_000 },
  });
  const target = await openedBleTarget(t, bindings, box);
  const report = await runSoak({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 3_000, controlSeq: 1_000, keyIdBase: 0x8000_0000, firstAnswerMs: 10_000 },
    stop: { cycles: 40 },
    limits: parseLimits(['failures==0', 'cycle_ms.min>=25']),
  });
  t.deepEqual(report.log.failures, []);
  t.true(report.summary.passed, JSON.stringify(report.verdicts));
  t.like(report.summary, { target: 'ble', access: 'signed', cycles: 40 });
  t.is(report.putBack?.result, 'pass');
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKey, box.provisioning.issuerKey);
});
