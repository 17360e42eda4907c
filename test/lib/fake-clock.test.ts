import test from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import { scaledClock, sleep } from '../../lib/clock.js';

test('callbacks run in due order, each seeing its own due time', (t) => {
  const clock = new FakeClock(1_000);
  const seen: string[] = [];
  clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
  clock.setTimeout(() => seen.push(`a@${clock.now()}`), 10);
  clock.setTimeout(() => seen.push(`c@${clock.now()}`), 20);
  clock.advance(15);
  t.deepEqual(seen, ['a@1010']);
  t.is(clock.now(), 1_015);
  clock.advance(5);
  t.deepEqual(seen, ['a@1010', 'b@1020', 'c@1020']);
  t.is(clock.pendingTimers, 0);
});

test('a callback scheduled during advance runs if it falls inside the window', (t) => {
  const clock = new FakeClock(0);
  const seen: number[] = [];
  clock.setTimeout(() => {
    seen.push(clock.now());
    clock.setTimeout(() => seen.push(clock.now()), 5);
  }, 5);
  clock.advance(10);
  t.deepEqual(seen, [5, 10]);
});

test('a cleared timer never runs, and time never goes back', (t) => {
  const clock = new FakeClock(0);
  let ran = false;
  const handle = clock.setTimeout(() => (ran = true), 1);
  clock.clearTimeout(handle);
  clock.advance(5);
  t.false(ran);
  t.throws(() => clock.advance(-1), { instanceOf: RangeError });
});

test('sleep resolves when the clock is advanced past it', async (t) => {
  const clock = new FakeClock(0);
  let done = false;
  const sleeping = sleep(clock, 1_000).then(() => (done = true));
  await clock.advanceAsync(999);
  t.false(done);
  await clock.advanceAsync(1);
  await sleeping;
  t.true(done);
});

test('a scaled clock runs faster than its base and shortens its timers', (t) => {
  const base = new FakeClock(0);
  const fast = scaledClock(60, base);
  let fired = false;
  fast.setTimeout(() => (fired = true), 60_000);
  base.advance(999);
  t.false(fired);
  base.advance(1);
  t.true(fired);
  t.is(fast.now(), 60_000);
  t.throws(() => scaledClock(0, base), { instanceOf: RangeError });
  t.is(scaledClock(1, base), base);
});
