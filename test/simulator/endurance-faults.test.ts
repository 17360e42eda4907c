// The endurance faults on a simulated box, on a fake clock: the battery sags
// by a set amount at each opening, and every n-th opening ACCESS jams the
// barrier for that one opening (BARRIER_FAULT, the try counted).
import test from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import { FrameKind, Status } from '../../firmware-protocol/constants.js';
import { sealCommand } from '../../firmware-protocol/command.js';
import { parseResponse } from '../../firmware-protocol/response.js';
import { describeFaults, noFaults } from '../../simulator/faults.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { testProvisioning } from '../helpers/box-provisioning.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);
const TIMINGS = { openingMs: 1_000, openHoldMs: 1_000, closingMs: 1_000 };
const provisioning = testProvisioning({ moduleId: 303 });

function access(keyId: number): Buffer {
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: provisioning.parkingKey,
    keyId,
    scope: provisioning.parkingId,
    body: {
      notBefore: START / 1000 - 60,
      notAfter: START / 1000 + 7_200,
      maxEntries: 3,
      maxExits: 3,
      moduleIds: [provisioning.moduleId],
    },
  });
}

async function answer(box: SimulatedBox, command: Buffer): Promise<ReturnType<typeof parseResponse>> {
  const response = await box.handleCommand(command);
  if (response === null) throw new Error('no answer');
  return parseResponse(response);
}

test('--battery-drain-mv: each opening takes that much off the battery, refused commands nothing', async (t) => {
  const clock = new FakeClock(START);
  const box = await SimulatedBox.start({
    provisioning,
    clock,
    barrierTimings: TIMINGS,
    batteryModel: { initialMv: 3_900, restDrainMvPerHour: 0, movementDrainMv: 0 },
    endurance: { batteryDrainMv: 250 },
  });
  t.teardown(() => box.stop());
  t.is((await answer(box, access(1))).status, Status.OK);
  t.is(box.battery.millivolts, 3_650);
  await clock.advanceAsync(3_000, 1_000);
  t.is((await answer(box, access(2))).batteryMv, 3_650, 'the answer reports the level before its own opening');
  t.is(box.battery.millivolts, 3_400);
  await clock.advanceAsync(3_000, 1_000);
  t.is((await answer(box, access(3))).status, Status.OK);
  t.is(box.battery.millivolts, 3_150);
  // Below the box's minimum (3300 in the test provisioning): LOW_BATTERY, no opening, no sag.
  t.is((await answer(box, access(4))).status, Status.LOW_BATTERY);
  t.is(box.battery.millivolts, 3_150);
  t.true(box.snapshot().faults.includes('battery_drain_mv=250'));
});

test('--jam-every: every n-th opening answers BARRIER_FAULT and leaves the arm in FAULT until the next opening', async (t) => {
  const clock = new FakeClock(START);
  const box = await SimulatedBox.start({ provisioning, clock, barrierTimings: TIMINGS, endurance: { jamEvery: 3 } });
  t.teardown(() => box.stop());
  const statuses: Status[] = [];
  for (let keyId = 1; keyId <= 6; keyId++) {
    const fields = await answer(box, access(keyId));
    statuses.push(fields.status);
    if (fields.status === Status.BARRIER_FAULT) {
      t.is(fields.remaining, 2, 'the jammed try still counts (docs/protocol.md, step 9)');
      t.is(box.barrier.state, 'fault');
      await clock.advanceAsync(60_000, 1_000);
      t.is(box.barrier.state, 'fault', 'no timer frees it');
    } else await clock.advanceAsync(3_000, 1_000);
  }
  t.deepEqual(statuses, [Status.OK, Status.OK, Status.BARRIER_FAULT, Status.OK, Status.OK, Status.BARRIER_FAULT]);
  // A refused command is no opening: it does not count toward the n-th.
  t.is((await answer(box, access(1))).status, Status.OK);
  t.is((await answer(box, access(1))).status, Status.OK);
  t.is((await answer(box, access(1))).status, Status.NO_TRIES_LEFT);
  t.is((await answer(box, access(7))).status, Status.BARRIER_FAULT);
  t.false(box.barrier.jammed, 'the jam was for that opening only');
});

test('describeFaults lists the endurance faults after the others', (t) => {
  t.deepEqual(describeFaults(noFaults, { batteryDrainMv: 0, jamEvery: 0 }), []);
  t.deepEqual(describeFaults({ ...noFaults, jammed: true }, { batteryDrainMv: 5, jamEvery: 10 }), [
    'jam',
    'battery_drain_mv=5',
    'jam_every=10',
  ]);
});

test('endurance faults must be whole numbers from 0', async (t) => {
  const clock = new FakeClock(START);
  for (const endurance of [{ jamEvery: -1 }, { batteryDrainMv: 1.5 }, { jamEvery: Number.NaN }]) {
    await t.throwsAsync(SimulatedBox.start({ provisioning, clock, endurance }), { instanceOf: RangeError });
  }
});
