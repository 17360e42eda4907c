import test from 'ava';
import { LoginLimiter, type LoginAttempt } from '../../api/auth/login-limiter.js';
import { FakeClock } from '../../lib/fake-clock.js';

function started(limiter: LoginLimiter, username: string, address: string): LoginAttempt {
  const attempt = limiter.begin(username, address);
  if ('retryAfterSeconds' in attempt) throw new Error(`limited for ${attempt.retryAfterSeconds} s`);
  return attempt;
}

test('attempts in flight hold their slots; a success clears failures, not others still in flight', (t) => {
  const clock = new FakeClock();
  const limiter = new LoginLimiter({ maxFailuresPerUsername: 2, maxFailuresPerAddress: 10, windowMs: 60_000 }, clock);
  const inFlight = started(limiter, 'a@example.com', '192.0.2.1');
  const failing = started(limiter, 'A@example.com ', '192.0.2.2');
  t.is(limiter.retryAfterSeconds('a@example.com', '192.0.2.3'), 60, 'two in flight fill the username limit');
  failing.failed();
  inFlight.succeeded();
  // The success cleared the failure and gave its own slot back.
  const third = started(limiter, 'a@example.com', '192.0.2.1');
  const fourth = started(limiter, 'a@example.com', '192.0.2.1');
  t.is(limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 60);
  // A success now clears failures but leaves the attempt still in flight.
  fourth.failed();
  started(limiter, 'other@example.com', '192.0.2.1').succeeded();
  t.is(limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 60, 'another username does not clear this one');
  third.abandon();
  t.is(limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 0, 'an abandoned attempt gives its slot back');
  third.failed();
  t.is(limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 0, 'an attempt ends once');
});

test('the address limit counts attempts in flight across usernames', (t) => {
  const clock = new FakeClock();
  const limiter = new LoginLimiter({ maxFailuresPerUsername: 10, maxFailuresPerAddress: 3, windowMs: 900_000 }, clock);
  const attempts = [0, 1, 2].map((i) => started(limiter, `user${i}@example.com`, '198.51.100.1'));
  t.deepEqual(limiter.begin('user9@example.com', '198.51.100.1'), { retryAfterSeconds: 900 });
  attempts[0]?.succeeded();
  attempts[1]?.failed();
  attempts[2]?.failed();
  clock.advance(1000);
  started(limiter, 'user9@example.com', '198.51.100.1').failed();
  t.deepEqual(
    limiter.begin('user0@example.com', '198.51.100.1'),
    { retryAfterSeconds: 899 },
    'a success does not clear its address',
  );
});
