// The simulation's power switch in process: the conformance suite's power
// cycle run through it (a box with --bug forget-tries fails on the tries
// kept, and only there), and MQTT during a power cut (no answers, the last
// will; answers again after power on).
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { runSuite } from '../../conformance/run-suite.js';
import { MqttBoxTarget } from '../../conformance/targets/mqtt-box-target.js';
import { FrameKind, parseResponse, sealCommand, Status } from '../../firmware-protocol/index.js';
import type { FirmwareBug } from '../../simulator/firmware-bug-names.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { Simulation, type SimulationOptions } from '../../simulator/simulation.js';
import { brokerForTest } from '../helpers/broker.js';
import { restartableTarget, type RestartableTarget } from '../helpers/restartable-target.js';
import { boxFile, FAST_BARRIER, keysOf, type BoxFile } from '../helpers/conformance-fixtures.js';
import { waitFor } from '../helpers/wait.js';

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';
const ECHOES = 'kind, key_id, module_id, direction, remaining echoed';

async function switched(
  t: ExecutionContext,
  box: BoxFile,
  url: string,
  bugs: readonly FirmwareBug[],
): Promise<RestartableTarget & { readonly simulation: Simulation }> {
  const stateDir = await mkdtemp(join(tmpdir(), 'pb-power-switch-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const options: SimulationOptions = {
    members: [{ provisioning: box.provisioning, settings: {} }],
    clock: systemClock,
    stateDir,
    barrierTimings: FAST_BARRIER,
    bugs,
    mqtt: { url, topics: new Topics() },
  };
  const mqttTarget = new MqttBoxTarget({
    url,
    moduleId: box.provisioning.moduleId,
    topics: new Topics(),
    clock: systemClock,
  });
  const simulation = await Simulation.start(options);
  // The restart is the simulation's power switch: off, then on.
  const link = restartableTarget(
    mqttTarget,
    async () => {
      await simulation.setPower(false);
      await simulation.setPower(true);
    },
    () => simulation.stop(),
  );
  const target = Object.assign(link, { simulation });
  await target.open();
  t.teardown(() => target.close());
  return target;
}

const SETTINGS = { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000 };

test('through the power switch, a box that keeps its state passes the power cycle case', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4511, keysOf('signed'));
  const target = await switched(t, box, broker.url, []);
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: SETTINGS,
  });
  t.deepEqual(
    report.results.filter((entry) => entry.result !== 'pass').map((entry) => entry.name),
    [],
  );
  t.is(target.restarts, 1);
});

test('--bug forget-tries fails the power cycle case on the tries kept, and the echo of remaining there only', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4512, keysOf('signed'));
  const target = await switched(t, box, broker.url, ['forget-tries']);
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: SETTINGS,
  });
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(
    failed.map((entry) => entry.name),
    [POWER_CYCLE, ECHOES],
  );
  // The second of two tries after the restart leaves one: the first was forgotten.
  t.regex(failed[0]?.reason ?? '', /remaining/);
  // The run's echo check sees the same answers, and nothing else.
  const problems = (failed[1]?.reason ?? '').split('; ');
  t.true(
    problems.every((problem) => problem.startsWith(`${POWER_CYCLE}: `)),
    failed[1]?.reason,
  );
  t.is(target.restarts, 1);
});

test('on MQTT, power off destroys the connection (the broker publishes the will) and nothing answers; on answers again', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4513, keysOf('sealed'));
  const target = await switched(t, box, broker.url, []);
  const topics = new Topics();
  const availability = topics.box(4513, 'availability');
  const watcher = await mqtt.connectAsync(broker.url);
  t.teardown(() => watcher.endAsync());
  const heard: { payload: string }[] = [];
  watcher.on('message', (_topic, payload) => heard.push({ payload: payload.toString() }));
  await watcher.subscribeAsync(availability);
  await waitFor(() => heard.some((entry) => entry.payload === 'online'), 'the box online');

  const now = Math.floor(Date.now() / 1000);
  const key = box.provisioning.parkingKey ?? Buffer.alloc(16);
  const command = (): Buffer =>
    sealCommand({
      kind: FrameKind.ACCESS,
      key,
      keyId: 5,
      scope: 7,
      body: { notBefore: now - 600, notAfter: now + 600, maxEntries: 5, maxExits: 5, moduleIds: [4513] },
    });
  const first = await target.exchange(command(), 2_000);
  t.is(first.response === null ? undefined : parseResponse(first.response).remaining, 4);

  heard.length = 0;
  await target.simulation.setPower(false);
  // The cut publishes nothing itself: this offline is the broker's, the last will.
  await waitFor(() => heard.some((entry) => entry.payload === 'offline'), 'the last will: offline');
  const silent = await target.exchange(command(), 500);
  t.is(silent.response, null);
  t.is(silent.error, 'timeout');

  await target.simulation.setPower(true);
  await waitFor(() => heard.some((entry) => entry.payload === 'online'), 'the box online again');
  const again = await target.exchange(command(), 2_000);
  t.not(again.response, null);
  const fields = again.response === null ? undefined : parseResponse(again.response);
  t.is(fields?.status, Status.OK);
  t.is(fields?.remaining, 3, 'the try of the command sent while off was never counted');
});

test('on BLE, power off takes the box off the radio and on puts a new one there', async (t) => {
  const box = await boxFile(t, 4514, keysOf('sealed'));
  const stateDir = await mkdtemp(join(tmpdir(), 'pb-power-ble-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const radio = new VirtualRadio();
  const events: string[] = [];
  radio.on('added', (peripheral) => events.push(`added ${peripheral.address}`));
  radio.on('removed', (peripheral) => events.push(`removed ${peripheral.address}`));
  const simulation = await Simulation.start({
    members: [{ provisioning: box.provisioning, settings: {} }],
    clock: systemClock,
    stateDir,
    ble: { radio },
  });
  t.teardown(() => simulation.stop());
  const before = simulation.boxes[0]?.ble;
  await simulation.setPower(false);
  t.false(simulation.powered);
  t.deepEqual(simulation.boxes, []);
  t.is(simulation.summary().online, 0);
  await simulation.setPower(true);
  t.true(simulation.powered);
  const after = simulation.boxes[0]?.ble;
  t.truthy(after);
  t.not(after, before, 'a new box, started from its state file');
  const address = box.provisioning.macAddress;
  t.deepEqual(events, [`added ${address}`, `removed ${address}`, `added ${address}`]);
});

test('what sim/set changed stays through a power cycle: the faults (a start-up jam cleared too), the battery and the clock', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4515, keysOf('sealed'));
  const stateDir = await mkdtemp(join(tmpdir(), 'pb-power-kept-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const simulation = await Simulation.start({
    // Started jammed, as `parkbench sim --jam` starts it.
    members: [{ provisioning: box.provisioning, settings: { faults: { jammed: true } } }],
    clock: systemClock,
    stateDir,
    mqtt: { url: broker.url, topics: new Topics() },
  });
  t.teardown(() => simulation.stop());
  const snapshot = () => simulation.boxes[0]?.box.snapshot();
  t.deepEqual(snapshot()?.faults, ['jam']);

  const client = await mqtt.connectAsync(broker.url);
  t.teardown(() => client.endAsync());
  await client.publishAsync(
    new Topics().box(4515, 'sim/set'),
    JSON.stringify({ jam: false, delay_ms: 300, battery_mv: 3100, clock_offset_seconds: 120 }),
  );
  await waitFor(() => snapshot()?.faults.join() === 'delay_ms=300', 'the sim/set applied');

  await simulation.setPower(false);
  await simulation.setPower(true);
  const after = snapshot();
  t.deepEqual(after?.faults, ['delay_ms=300'], 'the run-time faults, not the start-up jam');
  t.is(after?.battery_mv, 3100);
  const aheadSeconds = Date.parse(after?.box_time ?? '') / 1000 - Date.now() / 1000;
  t.true(Math.abs(aheadSeconds - 120) < 3, `the box clock is ${aheadSeconds} s ahead`);
});
