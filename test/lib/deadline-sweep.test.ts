// DeadlineSweep on a stepped clock: the timer at the soonest deadline, the
// sweep, the read again; the longest wait; a failed read or sweep tried
// again; close after the sweep under way; a real timer that lets the
// process exit.
import test from 'ava';
import { systemClock, unrefTimer } from '../../lib/clock.js';
import { DeadlineSweep, type DeadlineSweepOptions } from '../../lib/deadline-sweep.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { messageOf } from '../../lib/message-of.js';

function sweepOver(clock: FakeClock, deadlines: number[], options: Partial<DeadlineSweepOptions> = {}) {
  const swept: number[] = [];
  const errors: string[] = [];
  const sweep = new DeadlineSweep({
    clock,
    soonest: () => Promise.resolve(deadlines.length === 0 ? undefined : Math.min(...deadlines)),
    sweep: (nowMs) => {
      swept.push(nowMs);
      deadlines.splice(0, deadlines.length, ...deadlines.filter((deadline) => deadline > nowMs));
      return Promise.resolve();
    },
    retryMs: 100,
    onError: (error, during) => errors.push(`${during}: ${String(error)}`),
    ...options,
  });
  return { sweep, swept, errors };
}

test('the timer falls at the soonest deadline, sweeps, and is set again for the next; none when nothing is due', async (t) => {
  const clock = new FakeClock(0);
  const deadlines = [5_000, 2_000];
  const { sweep, swept } = sweepOver(clock, deadlines);
  sweep.arm();
  await clock.advanceAsync(1_999, 1);
  t.deepEqual(swept, []);
  await clock.advanceAsync(1);
  t.deepEqual(swept, [2_000]);
  await clock.advanceAsync(3_000, 100);
  t.deepEqual(swept, [2_000, 5_000]);
  await clock.advanceAsync(0);
  t.is(clock.pendingTimers, 0);
  // A deadline the caller adds is read when it arms again; one passed already is swept at once.
  deadlines.push(clock.now() - 1);
  sweep.arm();
  await clock.advanceAsync(0);
  t.deepEqual(swept, [2_000, 5_000, 5_000]);
  await sweep.close();
});

test('maxWaitMs: the timer reads again at least that often, so a deadline written elsewhere is seen', async (t) => {
  const clock = new FakeClock(0);
  const deadlines: number[] = [];
  const { sweep, swept } = sweepOver(clock, deadlines, { maxWaitMs: 1_000 });
  sweep.arm();
  await clock.advanceAsync(0);
  t.is(clock.pendingTimers, 1);
  // Written without an arm (another process): seen at the next read.
  deadlines.push(1_500);
  await clock.advanceAsync(1_000);
  t.deepEqual(swept, [1_000]);
  await clock.advanceAsync(500);
  t.deepEqual(swept, [1_000, 1_500]);
  await sweep.close();
  t.is(clock.pendingTimers, 0);
});

test('a failed read and a failed sweep are told and tried again retryMs later', async (t) => {
  const clock = new FakeClock(0);
  let reads = 0;
  let sweeps = 0;
  const errors: string[] = [];
  const sweep = new DeadlineSweep({
    clock,
    soonest: () => (++reads === 1 ? Promise.reject(new Error('away')) : Promise.resolve(sweeps < 2 ? 10 : undefined)),
    sweep: () => (++sweeps === 1 ? Promise.reject(new Error('busy')) : Promise.resolve()),
    retryMs: 100,
    onError: (error, during) => errors.push(`${during}: ${messageOf(error)}`),
  });
  sweep.arm();
  await clock.advanceAsync(0);
  t.deepEqual(errors, ['read: away']);
  await clock.advanceAsync(100);
  t.is(reads, 2);
  // Due at 10 (passed): swept at once, which fails; again 100 ms later.
  await clock.advanceAsync(0);
  t.is(sweeps, 1);
  t.deepEqual(errors, ['read: away', 'sweep: busy']);
  await clock.advanceAsync(100);
  t.is(sweeps, 2);
  await clock.advanceAsync(0);
  t.is(clock.pendingTimers, 0);
  await sweep.close();
});

test('close waits for the sweep under way and stops the timer; an arm after it does nothing', async (t) => {
  const clock = new FakeClock(0);
  let finish: () => void = () => undefined;
  const sweep = new DeadlineSweep({
    clock,
    soonest: () => Promise.resolve(10),
    sweep: () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
    retryMs: 100,
    maxWaitMs: 1_000,
    onError: () => undefined,
  });
  sweep.arm();
  await clock.advanceAsync(10);
  let closed = false;
  const closing = sweep.close().then(() => {
    closed = true;
  });
  await clock.advanceAsync(0);
  t.false(closed);
  finish();
  await closing;
  t.true(closed);
  sweep.arm();
  await clock.advanceAsync(0);
  t.is(clock.pendingTimers, 0);
});

test("unrefTimer lets the process exit while a real timer waits; a fake clock's timer is left as it is", (t) => {
  const handle = systemClock.setTimeout(() => undefined, 60_000);
  t.teardown(() => systemClock.clearTimeout(handle));
  t.true((handle as NodeJS.Timeout).hasRef());
  unrefTimer(handle);
  t.false((handle as NodeJS.Timeout).hasRef());
  const clock = new FakeClock(0);
  unrefTimer(clock.setTimeout(() => undefined, 10));
  t.is(clock.pendingTimers, 1);
});
