// The case "all of it survives a power cycle" where the target can restart
// the box: the suite over MQTT against the real simulator in process, whose
// restart stops the simulation and starts it again on the same state folder
// (the command line's targets cannot restart a box, and skip the case). A box
// that keeps its state passes; one that forgets it (memory only) fails that
// case, the box_seq check, and the later cases that sign with the suite's
// issuer (the box went back to its file's), nothing else.
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { runSuite } from '../../conformance/run-suite.js';
import { MqttBoxTarget } from '../../conformance/targets/mqtt-box-target.js';
import type { SimulatedBox } from '../../simulator/simulated-box.js';
import { Simulation, type SimulationOptions } from '../../simulator/simulation.js';
import { brokerForTest } from '../helpers/broker.js';
import { restartableTarget, type RestartableTarget } from '../helpers/restartable-target.js';
import { boxFile, FAST_BARRIER, keysOf, reportRows, type BoxFile } from '../helpers/conformance-fixtures.js';

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';

async function restartable(
  t: ExecutionContext,
  box: BoxFile,
  url: string,
  keepsState: boolean,
): Promise<RestartableTarget & { readonly box: SimulatedBox | undefined }> {
  let stateDir: string | null = null;
  if (keepsState) {
    const folder = await mkdtemp(join(tmpdir(), 'pb-power-cycle-'));
    t.teardown(() => rm(folder, { recursive: true, force: true }));
    stateDir = folder;
  }
  const options: SimulationOptions = {
    members: [{ provisioning: box.provisioning, settings: {} }],
    clock: systemClock,
    stateDir,
    barrierTimings: FAST_BARRIER,
    mqtt: { url, topics: new Topics() },
  };
  const mqtt = new MqttBoxTarget({
    url,
    moduleId: box.provisioning.moduleId,
    topics: new Topics(),
    clock: systemClock,
  });
  let simulation = await Simulation.start(options);
  const target = Object.defineProperty(
    restartableTarget(
      mqtt,
      async () => {
        await simulation.stop();
        simulation = await Simulation.start(options);
      },
      () => simulation.stop(),
    ),
    'box',
    { get: () => simulation.boxes[0]?.box },
  ) as RestartableTarget & { readonly box: SimulatedBox | undefined };
  await target.open();
  t.teardown(() => target.close());
  return target;
}

test('a box that keeps its state (its state file) passes the power cycle, and every other case', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4501, keysOf('both'));
  const target = await restartable(t, box, broker.url, true);
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000 },
  });
  t.deepEqual(
    report.results.filter((entry) => entry.result !== 'pass'),
    [],
  );
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(target.restarts, 1);
  t.is(report.results.find((entry) => entry.name === POWER_CYCLE)?.got, '0x00, 0x00, restart, 0x00, 0x16, 0x00, 0x15');
  // The restarted box got its issuer keys back at the end too.
  t.deepEqual(target.box?.state.issuerKey, box.provisioning.issuerKey);
});

test("a box that forgets its state on a restart fails the power cycle, box_seq, and what needs the suite's issuer after it", async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4502, keysOf('signed'));
  const target = await restartable(t, box, broker.url, false);
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000 },
  });
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(
    failed.map((entry) => entry.name),
    [
      POWER_CYCLE,
      'REVOKE at the 65th live entry is REVOCATION_FULL (or the box says it holds more)',
      'garbage on the link, then a valid ACCESS',
      'box_seq strictly increasing',
    ],
  );
  // Back to the file's issuer keys (every signed command of the suite refused), and the control sequence forgotten.
  t.is(failed[0]?.got, '0x00, 0x00, restart, 0x20, 0x20, 0x20, 0x00');
});
