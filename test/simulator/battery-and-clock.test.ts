import test from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import { Battery } from '../../simulator/battery.js';
import { BoxClock } from '../../simulator/box-clock.js';

const HOUR = 3_600_000;

test('the battery drains slowly at rest and per movement', (t) => {
  const clock = new FakeClock();
  const battery = new Battery(clock, { initialMv: 3_700, restDrainMvPerHour: 2, movementDrainMv: 5 });
  t.is(battery.millivolts, 3_700);
  clock.advance(10 * HOUR);
  t.is(battery.millivolts, 3_680);
  battery.drainMovement();
  t.is(battery.millivolts, 3_675);
  clock.advance(HOUR);
  t.is(battery.millivolts, 3_673);
});

test('the battery level is settable and stays within the u16 of the frame', (t) => {
  const clock = new FakeClock();
  const battery = new Battery(clock, { initialMv: 10, restDrainMvPerHour: 100, movementDrainMv: 1 });
  clock.advance(HOUR);
  t.is(battery.millivolts, 0);
  battery.set(100_000);
  t.is(battery.millivolts, 0xffff);
  battery.set(3_100);
  t.is(battery.millivolts, 3_100);
  t.throws(() => battery.set(Number.NaN), { instanceOf: RangeError });
});

test('the box clock follows true time with its offset', (t) => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const boxClock = new BoxClock(clock, { offsetMs: -30_000 });
  t.is(boxClock.nowSeconds(), Date.UTC(2026, 0, 1) / 1000 - 30);
  clock.advance(60_000);
  t.is(boxClock.nowSeconds(), Date.UTC(2026, 0, 1) / 1000 + 30);
});

test('a drifting box clock gains its ppm over a day', (t) => {
  const clock = new FakeClock(0);
  const boxClock = new BoxClock(clock, { driftPpm: 50 });
  clock.advance(24 * HOUR);
  // 50 ppm of 86,400 s is 4.32 s.
  t.is(Math.round(boxClock.offsetMs), 4_320);
  boxClock.setDrift(0);
  clock.advance(24 * HOUR);
  t.is(Math.round(boxClock.offsetMs), 4_320, 'changing the drift keeps the time read so far');
});

test('TIME_SET sets the box clock, which then runs on', (t) => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const boxClock = new BoxClock(clock, { offsetMs: 3_600_000, driftPpm: 0 });
  boxClock.setSeconds(1_700_000_000);
  t.is(boxClock.nowSeconds(), 1_700_000_000);
  clock.advance(5_000);
  t.is(boxClock.nowSeconds(), 1_700_000_005);
  boxClock.setOffset(0);
  t.is(boxClock.nowMs(), clock.now());
  t.throws(() => boxClock.setSeconds(Number.POSITIVE_INFINITY), { instanceOf: RangeError });
});
