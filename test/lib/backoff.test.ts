import test from 'ava';
import { backoffDelay, defaultBackoff } from '../../lib/backoff.js';

test('delays double up to the maximum', (t) => {
  const policy = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0 };
  t.deepEqual(
    [0, 1, 2, 3, 4, 5].map((attempt) => backoffDelay(policy, attempt)),
    [100, 200, 400, 800, 1_000, 1_000],
  );
});

test('jitter only ever shortens a delay, by at most its share', (t) => {
  for (const random of [0, 0.25, 0.999]) {
    const delay = backoffDelay(defaultBackoff, 3, () => random);
    t.true(delay <= 4_000);
    t.true(delay >= 2_000);
  }
});
