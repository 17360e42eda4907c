import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../lib/fake-clock.js';
import { FrameKind, Status } from '../../firmware-protocol/constants.js';
import { sealCommand } from '../../firmware-protocol/command.js';
import { parseResponse, verifyResponse } from '../../firmware-protocol/response.js';
import { SimulatedBox, type SimulatedBoxOptions } from '../../simulator/simulated-box.js';
import { BoxStateFile } from '../../simulator/state-file.js';
import type { SealedProvisioning as Provisioning } from '../../lib/provisioning-file.js';
import { testProvisioning } from '../helpers/box-provisioning.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);
const startSeconds = START / 1000;

function provisioning(overrides: Partial<Provisioning> = {}): Provisioning {
  return testProvisioning({ moduleId: 101, ...overrides });
}

async function startBox(
  options: Partial<SimulatedBoxOptions> & { provisioning?: Provisioning } = {},
): Promise<{ box: SimulatedBox; clock: FakeClock; box_: Provisioning }> {
  const clock = new FakeClock(START);
  const box_ = options.provisioning ?? provisioning();
  const box = await SimulatedBox.start({ clock, provisioning: box_, ...options });
  return { box, clock, box_ };
}

function access(
  box: Provisioning,
  overrides: { keyId?: number; notBefore?: number; notAfter?: number; entries?: number; modules?: number[] } = {},
): Buffer {
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: box.parkingKey,
    keyId: overrides.keyId ?? 42,
    scope: box.parkingId,
    body: {
      notBefore: overrides.notBefore ?? startSeconds - 60,
      notAfter: overrides.notAfter ?? startSeconds + 7_200,
      maxEntries: overrides.entries ?? 3,
      maxExits: 3,
      moduleIds: overrides.modules ?? [box.moduleId],
    },
  });
}

test('a valid ACCESS opens the barrier, which then cycles back to closed', async (t) => {
  const { box, clock, box_ } = await startBox();
  const command = access(box_);
  const response = await box.handleCommand(command);
  t.truthy(response);
  if (response === null) return;
  t.true(verifyResponse(response, box_.boxKey, command));
  const fields = parseResponse(response);
  t.is(fields.status, Status.OK);
  t.is(fields.keyId, 42);
  t.is(fields.remaining, 2);
  t.is(fields.boxTime, startSeconds);
  t.is(box.barrier.state, 'opening');
  clock.advance(2_000 + 10_000 + 2_000);
  t.is(box.barrier.state, 'closed');
});

test('every change of the barrier is published as a snapshot', async (t) => {
  const { box, clock, box_ } = await startBox({ carPassDelayMs: 3_000 });
  const seen: string[] = [];
  box.on('change', (snapshot) => seen.push(snapshot.barrier));
  await box.handleCommand(access(box_));
  clock.advance(2_000 + 3_000 + 2_000);
  t.deepEqual(seen, ['opening', 'open', 'closing', 'closed'], 'the car passed after 3 s, before the 10 s hold');
});

test('TIME_SET sets the box clock; BATTERY_QUERY reports the battery', async (t) => {
  const { box, box_ } = await startBox({ boxClock: { offsetMs: -3_600_000 } });
  const timeSet = sealCommand({
    kind: FrameKind.TIME_SET,
    key: box_.boxKey,
    keyId: 1,
    scope: box_.moduleId,
    body: { time: startSeconds },
  });
  const timeResponse = parseResponse((await box.handleCommand(timeSet)) ?? Buffer.alloc(0));
  t.is(timeResponse.status, Status.OK);
  t.is(box.boxClock.nowSeconds(), startSeconds);
  box.apply({ batteryMv: 3_456 });
  const query = sealCommand({
    kind: FrameKind.BATTERY_QUERY,
    key: box_.boxKey,
    keyId: 2,
    scope: box_.moduleId,
    body: {},
  });
  const batteryResponse = parseResponse((await box.handleCommand(query)) ?? Buffer.alloc(0));
  t.is(batteryResponse.status, Status.OK);
  t.is(batteryResponse.batteryMv, 3_456);
  const replay = parseResponse((await box.handleCommand(query)) ?? Buffer.alloc(0));
  t.is(replay.status, Status.REPLAY);
});

test('a jammed barrier answers BARRIER_FAULT and shows the fault', async (t) => {
  const { box, box_ } = await startBox({ faults: { jammed: true } });
  const response = parseResponse((await box.handleCommand(access(box_))) ?? Buffer.alloc(0));
  t.is(response.status, Status.BARRIER_FAULT);
  t.is(box.barrier.state, 'fault');
  t.deepEqual(box.snapshot().faults, ['jam']);
  box.apply({ faults: { jammed: false } });
  t.deepEqual(box.snapshot().faults, []);
});

test('a flat battery refuses ACCESS with LOW_BATTERY', async (t) => {
  const { box, box_ } = await startBox();
  box.apply({ batteryMv: 3_000 });
  const response = parseResponse((await box.handleCommand(access(box_))) ?? Buffer.alloc(0));
  t.is(response.status, Status.LOW_BATTERY);
  t.is(box.barrier.state, 'closed');
});

test('dropped commands get no answer; corrupted answers do not verify', async (t) => {
  const { box, box_ } = await startBox({ faults: { dropCommands: 0.5, corruptResponses: 0 }, random: () => 0.4 });
  t.is(await box.handleCommand(access(box_)), null);
  t.is(box.counters.commandsDropped, 1);
  box.apply({ faults: { dropCommands: 0, corruptResponses: 1 } });
  const command = access(box_);
  const response = await box.handleCommand(command);
  t.truthy(response);
  t.false(verifyResponse(response ?? Buffer.alloc(0), box_.boxKey, command));
  t.is(box.counters.responsesCorrupted, 1);
});

test('a delayed answer arrives only once the delay has passed', async (t) => {
  const { box, clock, box_ } = await startBox({ faults: { delayMs: 5_000 } });
  let answered = false;
  const pending = box.handleCommand(access(box_)).then(() => (answered = true));
  await clock.advanceAsync(4_000, 1_000);
  t.false(answered);
  await clock.advanceAsync(1_000, 1_000);
  await pending;
  t.true(answered);
});

test('garbage gets MALFORMED or UNSUPPORTED_VERSION, is counted, and a valid command still works', async (t) => {
  const { box, box_ } = await startBox();
  t.is(parseResponse((await box.handleCommand(Buffer.alloc(0))) ?? Buffer.alloc(0)).status, Status.MALFORMED);
  t.is(
    parseResponse((await box.handleCommand(Buffer.from([2, 1, 2, 3]))) ?? Buffer.alloc(0)).status,
    Status.UNSUPPORTED_VERSION,
  );
  t.is(parseResponse((await box.handleCommand(randomBytes(500))) ?? Buffer.alloc(0)).status === Status.OK, false);
  t.true(box.counters.badFrames >= 2);
  t.is(parseResponse((await box.handleCommand(access(box_))) ?? Buffer.alloc(0)).status, Status.OK);
});

test('box_seq rises with every answer and status report', async (t) => {
  const { box, box_ } = await startBox();
  const sequences: number[] = [];
  for (let index = 0; index < 3; index++) {
    sequences.push(parseResponse(await box.statusReport()).boxSeq);
    sequences.push(
      parseResponse((await box.handleCommand(access(box_, { keyId: 100 + index }))) ?? Buffer.alloc(0)).boxSeq,
    );
  }
  t.deepEqual(sequences, [1, 2, 3, 4, 5, 6]);
  const report = await box.statusReport();
  t.true(verifyResponse(report, box_.boxKey, null));
});

test('a restarted box goes on with its tries and box_seq', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-box-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const stateFile = new BoxStateFile(join(directory, 'box-101.json'));
  const box_ = provisioning();
  const first = await startBox({ provisioning: box_, stateFile });
  await first.box.handleCommand(access(box_, { entries: 2 }));
  await first.box.stop();
  const second = await startBox({ provisioning: box_, stateFile: new BoxStateFile(stateFile.path) });
  const again = parseResponse((await second.box.handleCommand(access(box_, { entries: 2 }))) ?? Buffer.alloc(0));
  t.is(again.status, Status.OK);
  t.is(again.remaining, 0);
  t.is(again.boxSeq, 2);
  const refused = parseResponse((await second.box.handleCommand(access(box_, { entries: 2 }))) ?? Buffer.alloc(0));
  t.is(refused.status, Status.NO_TRIES_LEFT);
});

test('the accept-expired firmware bug opens the barrier for an expired key', async (t) => {
  const box_ = provisioning();
  const expired = { notBefore: startSeconds - 7_200, notAfter: startSeconds - 3_600 };
  const correct = await startBox({ provisioning: box_ });
  t.is(
    parseResponse((await correct.box.handleCommand(access(box_, expired))) ?? Buffer.alloc(0)).status,
    Status.EXPIRED,
  );
  const buggy = await startBox({ provisioning: box_, bugs: ['accept-expired'] });
  t.is(parseResponse((await buggy.box.handleCommand(access(box_, expired))) ?? Buffer.alloc(0)).status, Status.OK);
});
