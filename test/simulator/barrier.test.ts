import test from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import { SimulatedBarrier, type BarrierState } from '../../simulator/barrier.js';

function recordStates(barrier: SimulatedBarrier): BarrierState[] {
  const states: BarrierState[] = [];
  barrier.on('change', (state) => states.push(state));
  return states;
}

test('a full cycle with the default timings: 2 s up, 10 s hold, 2 s down', (t) => {
  const clock = new FakeClock();
  const barrier = new SimulatedBarrier(clock);
  const states = recordStates(barrier);
  t.true(barrier.open());
  t.is(barrier.state, 'opening');
  clock.advance(1_999);
  t.is(barrier.state, 'opening');
  clock.advance(1);
  t.is(barrier.state, 'open');
  clock.advance(10_000);
  t.is(barrier.state, 'closing');
  clock.advance(2_000);
  t.deepEqual(states, ['opening', 'open', 'closing', 'closed']);
  t.is(clock.pendingTimers, 0);
});

test('a car passing closes the barrier before the hold time is over', (t) => {
  const clock = new FakeClock();
  const barrier = new SimulatedBarrier(clock, { openingMs: 100, openHoldMs: 10_000, closingMs: 100 });
  barrier.open();
  clock.advance(100);
  barrier.carPassed();
  t.is(barrier.state, 'closing');
  clock.advance(100);
  t.is(barrier.state, 'closed');
  barrier.carPassed();
  t.is(barrier.state, 'closed', 'no car can close a closed barrier');
});

test('opening again while open extends the hold; while closing it rises again', (t) => {
  const clock = new FakeClock();
  const barrier = new SimulatedBarrier(clock, { openingMs: 100, openHoldMs: 1_000, closingMs: 500 });
  barrier.open();
  clock.advance(100 + 900);
  barrier.open();
  clock.advance(900);
  t.is(barrier.state, 'open');
  clock.advance(100);
  t.is(barrier.state, 'closing');
  clock.advance(200);
  barrier.open();
  t.is(barrier.state, 'opening');
});

test('each movement of the arm is reported once', (t) => {
  const clock = new FakeClock();
  const barrier = new SimulatedBarrier(clock);
  let movements = 0;
  barrier.on('movement', () => movements++);
  barrier.open();
  clock.advance(60_000);
  t.is(movements, 2);
});

test('a jammed barrier refuses to open and shows FAULT until freed', (t) => {
  const clock = new FakeClock();
  const barrier = new SimulatedBarrier(clock, { openingMs: 100, openHoldMs: 100, closingMs: 100 });
  barrier.setJammed(true);
  t.false(barrier.open());
  t.is(barrier.state, 'fault');
  barrier.setJammed(false);
  t.is(barrier.state, 'closing');
  clock.advance(100);
  t.is(barrier.state, 'closed');
});

test('a jam during a movement stops it in FAULT', (t) => {
  const clock = new FakeClock();
  const barrier = new SimulatedBarrier(clock, { openingMs: 1_000, openHoldMs: 100, closingMs: 100 });
  barrier.open();
  clock.advance(500);
  barrier.setJammed(true);
  t.is(barrier.state, 'fault');
  clock.advance(10_000);
  t.is(barrier.state, 'fault');
  t.is(clock.pendingTimers, 0);
});

test('durations must be non-negative numbers', (t) => {
  t.throws(() => new SimulatedBarrier(new FakeClock(), { openingMs: -1, openHoldMs: 1, closingMs: 1 }), {
    instanceOf: RangeError,
  });
  t.throws(() => new SimulatedBarrier(new FakeClock(), { openingMs: 1, openHoldMs: Number.NaN, closingMs: 1 }), {
    instanceOf: RangeError,
  });
});
