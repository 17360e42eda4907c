// The capture ring's clock, in microseconds since the Unix epoch. The system
// clock is read as docs/capture.md says captures are stamped: the process's
// monotonic clock (performance.now over timeOrigin). Another clock (a
// test's FakeClock) is read as it is, so its steps age the ring's records.
import { systemClock, type Clock } from '../../lib/clock.js';

export function captureMicros(clock: Clock): () => number {
  if (clock === systemClock) return () => Math.round((performance.timeOrigin + performance.now()) * 1000);
  return () => Math.round(clock.now() * 1000);
}
