// Control commands under the box key (docs/protocol.md, step 6): TIME_SET
// sets the clock first, a control sequence is accepted once, BATTERY_QUERY
// tells the battery.
import { Status } from '../../firmware-protocol/index.js';
import { batteryQuery, timeSet } from '../box-under-test.js';
import type { ConformanceCase } from './conformance-case.js';

/** battery_mv the suite calls plausible: from a spent cell to a 12 V lead battery. */
export const PLAUSIBLE_BATTERY_MV = { min: 1_000, max: 20_000 } as const;

const timeSetFollows: ConformanceCase = {
  name: 'TIME_SET sets the clock; box_time follows',
  step: 'checks, step 6',
  expected: '0x00, 0x00',
  async run(run) {
    const { context } = run;
    // The true time, as the service sets it.
    const time = Math.floor(context.clock.now() / 1000);
    const set = await run.send(timeSet(run.box, context.controlSeq(), time), { status: Status.OK });
    if (set.fields !== null && set.fields.boxTime !== time)
      run.fail(`TIME_SET answered box_time ${set.fields.boxTime}, not the time set ${time}`);
    const since = context.clock.now();
    const after = await run.send(batteryQuery(run.box, context.controlSeq()), { status: Status.OK });
    if (after.fields === null) return;
    const latest = time + Math.ceil((context.clock.now() - since) / 1000) + 1;
    if (after.fields.boxTime < time || after.fields.boxTime > latest) {
      run.fail(`box_time ${after.fields.boxTime} after TIME_SET ${time}: expected ${time}..${latest}`);
    }
  },
};

const replay: ConformanceCase = {
  name: 'the same control sequence again',
  step: 'checks, step 6',
  expected: '0x00, 0x15',
  async run(run) {
    const sequence = run.context.controlSeq();
    await run.send(batteryQuery(run.box, sequence), { status: Status.OK });
    await run.send(batteryQuery(run.box, sequence), { status: Status.REPLAY });
  },
};

const battery: ConformanceCase = {
  name: 'BATTERY_QUERY tells battery_mv',
  step: 'checks, step 6; response frame, offset 19',
  expected: '0x00',
  async run(run) {
    const answer = await run.send(batteryQuery(run.box, run.context.controlSeq()), { status: Status.OK });
    if (answer.fields === null) return;
    const { batteryMv } = answer.fields;
    if (batteryMv < PLAUSIBLE_BATTERY_MV.min || batteryMv > PLAUSIBLE_BATTERY_MV.max) {
      run.fail(`battery_mv ${batteryMv} is not plausible (${PLAUSIBLE_BATTERY_MV.min}..${PLAUSIBLE_BATTERY_MV.max})`);
    }
  },
};

export const controlCases: readonly ConformanceCase[] = [timeSetFollows, replay, battery];
