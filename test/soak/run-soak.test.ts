// runSoak against a simulated box in this process on a real pty pair:
// healthy, it passes; its measurements are there for every cycle; a signed
// box gets its issuer keys back; a power cycle every N cycles restarts the
// box and the run goes on.
import avaTest from 'ava';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { runSoak } from '../../soak/run-soak.js';
import { parseLimits } from '../../soak/limits.js';
import { testNeeding } from '../helpers/requires.js';
import { soakSim } from './soak-sim.js';

const test = testNeeding('socat', avaTest);

const settings = { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000, firstAnswerMs: 10_000 };

test('a healthy box passes 200 cycles, each measured', async (t) => {
  const sim = await soakSim(t, 5101);
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings,
    stop: { cycles: 200 },
    limits: parseLimits(['failures==0', 'answer_ms.p99<=250', 'cycle_ms.max<=5000']),
  });
  t.deepEqual(report.log.failures, []);
  t.is(report.summary.cycles, 200);
  t.true(report.summary.passed, JSON.stringify(report.verdicts));
  const first = report.log.get(0);
  t.is(first.status, 0);
  t.true((first.answer_ms ?? -1) > 0);
  t.true((first.open_ms ?? -1) > 0);
  t.true((first.cycle_ms ?? -1) >= (first.open_ms ?? 0));
  t.true((first.battery_mv ?? 0) > 1000);
  t.true(Math.abs(first.drift_s ?? 99) <= 1);
  t.is(report.measurements.answer_ms.count, 200);
  t.log(report.summary, report.measurements.answer_ms, report.measurements.cycle_ms);
});
