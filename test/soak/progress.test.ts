// The progress display on the fake clock: a bar redrawn in place on a
// terminal, a quiet line every 10 s elsewhere; rate and time left from the clock.
import test from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import { clockTime, describeProgress, ProgressDisplay, QUIET_LINE_MS } from '../../soak/progress.js';

function stream(isTTY: boolean): {
  written: string[];
  write: (text: string) => boolean;
  isTTY: boolean;
  columns: number;
} {
  const written: string[] = [];
  return { written, write: (text) => written.push(text) > 0, isTTY, columns: 100 };
}

test('the figures: cycles of the total, rate, failures, time left by cycles or duration, whichever is sooner', (t) => {
  t.is(
    describeProgress({ cycles: 1000, failures: 1, elapsedMs: 10_000 }, { cycles: 5000 }),
    '1000/5000 cycles, 100.0/s, 1 failure, 0:40 left',
  );
  t.is(
    describeProgress({ cycles: 100, failures: 0, elapsedMs: 60_000 }, { durationMs: 8 * 3_600_000 }),
    '100 cycles, 1.7/s, 0 failures, 7:59:00 left',
  );
  t.is(
    describeProgress({ cycles: 100, failures: 2, elapsedMs: 1_000 }, { cycles: 1000, durationMs: 5_000 }),
    '100/1000 cycles, 100.0/s, 2 failures, 0:04 left',
  );
  t.is(clockTime(59_001), '1:00');
});

test('on a terminal: one line redrawn in place, at most every 100 ms, ended by finish', (t) => {
  const clock = new FakeClock();
  const out = stream(true);
  const display = new ProgressDisplay(out, clock, { cycles: 100 });
  display.update({ cycles: 1, failures: 0, elapsedMs: 10 });
  display.update({ cycles: 2, failures: 0, elapsedMs: 20 });
  clock.advance(100);
  display.update({ cycles: 50, failures: 0, elapsedMs: 500 });
  t.is(out.written.length, 2);
  t.true(out.written.every((line) => line.startsWith('\r') && line.length === 100));
  t.regex(out.written[1] ?? '', /^\r\[#{12}\.{12}\] 50\/100 cycles, 100\.0\/s, 0 failures, 0:01 left/);
  display.finish();
  t.is(out.written.at(-1), '\n');
});

test('without a terminal: a quiet line at the first cycle, then every 10 s', (t) => {
  const clock = new FakeClock();
  const out = stream(false);
  const display = new ProgressDisplay(out, clock, { durationMs: 60_000 });
  display.update({ cycles: 1, failures: 0, elapsedMs: 5 });
  clock.advance(QUIET_LINE_MS - 1);
  display.update({ cycles: 900, failures: 0, elapsedMs: 9_999 });
  clock.advance(1);
  display.update({ cycles: 1000, failures: 3, elapsedMs: 10_000 });
  t.deepEqual(out.written, [
    'soak: 1 cycles, 200.0/s, 0 failures, 1:00 left\n',
    'soak: 1000 cycles, 100.0/s, 3 failures, 0:50 left\n',
  ]);
});
