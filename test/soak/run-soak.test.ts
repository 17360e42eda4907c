// runSoak against a simulated box in this process on a real pty pair:
// healthy, it passes; its measurements are there for every cycle; a signed
// box gets its issuer keys back; a power cycle every N cycles restarts the
// box and the run goes on.
import avaTest from 'ava';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { runSoak } from '../../soak/run-soak.js';
import { parseLimits } from '../../soak/limits.js';
import { keysOf } from '../helpers/conformance-fixtures.js';
import { testNeeding } from '../helpers/requires.js';
import { soakSim } from './soak-sim.js';

const test = testNeeding('socat', avaTest);

const settings = { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000, firstAnswerMs: 10_000 };

/** Enough battery for the runs' openings (the simulator drains 1 mV a movement). */
const FULL_BATTERY = { batteryMv: 12_000 };

test('a healthy box passes 200 cycles, each measured', async (t) => {
  const sim = await soakSim(t, 5101, { settings: FULL_BATTERY });
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings,
    stop: { cycles: 200 },
    limits: parseLimits(['failures==0', 'answer_ms.p99<=2000', 'cycle_ms.max<=5000']),
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
  // box_time is whole seconds, made before the answer arrives: within two seconds of the true time on a loaded machine.
  t.true(Math.abs(first.drift_s ?? 99) < 2, String(first.drift_s));
  t.is(report.measurements.answer_ms.count, 200);
});

test('a box of a signed parking: signed with the run’s issuer, and its own issuer keys put back', async (t) => {
  const sim = await soakSim(t, 5102, { overrides: keysOf('signed'), settings: FULL_BATTERY });
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings,
    stop: { cycles: 50 },
    limits: parseLimits(['failures==0']),
  });
  t.deepEqual(report.log.failures, []);
  t.is(report.summary.access, 'signed');
  t.is(report.putBack?.result, 'pass');
  t.true(report.summary.passed);
  t.deepEqual(sim.simulation.boxes[0]?.box.state.issuerKey, sim.box.provisioning.issuerKey);
});

test('a power cycle before every 20th cycle restarts the box, and the run goes on without a failure', async (t) => {
  const sim = await soakSim(t, 5103, { settings: FULL_BATTERY });
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings,
    stop: { cycles: 60 },
    limits: parseLimits(['failures==0']),
    power: sim.power(50),
    powerCycleEvery: 20,
  });
  t.deepEqual(report.log.failures, []);
  t.is(sim.restarts, 2);
  t.deepEqual(
    report.powerCycles.map((each) => each.beforeCycle),
    [21, 41],
  );
  t.true(report.powerCycles.every((each) => each.failure === undefined && each.ms >= 50));
  t.is(report.summary.power_cycles, 2);
  t.true(report.summary.passed);
});

test('a switch that fails is a failure of the run, and the cycles go on', async (t) => {
  const sim = await soakSim(t, 5104, { settings: FULL_BATTERY });
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings,
    stop: { cycles: 10 },
    limits: parseLimits(['failures==0']),
    power: {
      ...sim.power(),
      description: 'a relay that is not there',
      cycle: () => Promise.reject(new Error('no relay')),
    },
    powerCycleEvery: 5,
  });
  t.is(report.summary.cycles, 10);
  t.is(report.summary.failures, 1);
  t.is(report.powerCycles[0]?.failure, 'power cycle (a relay that is not there): no relay');
  t.false(report.summary.passed);
});

test('interrupted: the cycle in flight stops waiting, what ran is reported', async (t) => {
  const sim = await soakSim(t, 5105, { settings: FULL_BATTERY });
  const interrupt = new AbortController();
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings,
    stop: { durationMs: 3_600_000 },
    limits: parseLimits(['failures==0']),
    signal: interrupt.signal,
    onCycle: (progress) => {
      if (progress.cycles === 25) interrupt.abort();
    },
  });
  t.true(report.interrupted);
  t.is(report.summary.cycles, 25);
});

test('without a first answer awaited, the cycles start at once on the true time', async (t) => {
  const sim = await soakSim(t, 5106, { settings: FULL_BATTERY });
  const { firstAnswerMs: _waited, ...atOnce } = settings;
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings: atOnce,
    stop: { cycles: 20 },
    limits: parseLimits(['failures==0']),
  });
  t.deepEqual(report.log.failures, []);
  t.is(report.summary.cycles, 20);
});

test('without a switch, a target that can restart the box is power-cycled by its restart()', async (t) => {
  const sim = await soakSim(t, 5107, { settings: FULL_BATTERY });
  const target = Object.assign(sim.target, { restart: () => sim.restart() });
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target,
    clock: systemClock,
    settings,
    stop: { cycles: 30 },
    limits: parseLimits(['failures==0']),
    powerCycleEvery: 10,
  });
  t.deepEqual(report.log.failures, []);
  t.is(sim.restarts, 2);
  t.deepEqual(
    report.powerCycles.map((each) => each.beforeCycle),
    [11, 21],
  );
});
