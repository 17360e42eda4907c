// Forwarding's failures, on the injected clock, against real local
// receivers: the Standard Webhooks retry schedule with jitter then dead, a
// Retry-After on 429 and 503, 410 Gone disabling the URL until revived, a
// receiver that hangs past the attempt timeout, a 301 not followed, and
// recovery; every attempt verified with the standardwebhooks package.
import test from 'ava';
import { RETRY_JITTER, RETRY_SCHEDULE_MS, retryAfterMs, retryDelay } from '../../../api/forwarding/retry-schedule.js';
import { countRows } from '../../helpers/box-logs.js';
import { clockAtNow, forwardingSetup, logs, send, type Forwarding } from '../../helpers/forwarding.js';
import {
  fail,
  gone,
  hang,
  ok,
  redirect,
  startReceiver,
  tooMany,
  unavailableUntil,
  type Answer,
  type Receiver,
} from '../../helpers/receiver.js';
import { verifies } from '../../helpers/webhook-receiver.js';

async function setupWith(
  t: Parameters<typeof startReceiver>[0],
  answers: Answer[],
  config = {},
): Promise<{ s: Forwarding; receiver: Receiver }> {
  // The receiver's clock is the test's (its library checks webhook-timestamp against it).
  const clock = clockAtNow();
  const receiver = await startReceiver(t, answers, clock);
  return { s: await forwardingSetup(t, receiver.url, { config, clock }), receiver };
}

/** Runs passes while stepping the clock `stepMs` at a time until `done` or `limitMs` elapsed. */
async function runUntil(s: Forwarding, done: () => Promise<boolean>, stepMs: number, limitMs: number): Promise<void> {
  for (let elapsed = 0; elapsed <= limitMs && !(await done()); elapsed += stepMs) {
    await s.app.ctx.forwarding.runOnce();
    if (await done()) return;
    s.app.clock.advance(stepMs);
  }
}

const status = async (s: Forwarding) => (await s.app.ctx.outbox.status())[0];

test('retryDelay: the specification schedule, lengthened by at most 20% of jitter, then dead after the tenth attempt', (t) => {
  t.deepEqual(
    RETRY_SCHEDULE_MS,
    [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000],
  );
  RETRY_SCHEDULE_MS.forEach((base, index) => {
    t.is(
      retryDelay(index + 1, () => 0),
      base,
    );
    t.is(
      retryDelay(index + 1, () => 0.999_999),
      Math.round(base * (1 + RETRY_JITTER * 0.999_999)),
    );
  });
  t.is(
    retryDelay(10, () => 0.5),
    undefined,
    'after the tenth failed attempt: dead',
  );
  t.is(retryAfterMs('120', 0), 120_000);
  t.is(retryAfterMs(new Date(60_000).toUTCString(), 0), 60_000, 'an HTTP-date');
  t.is(retryAfterMs('999999', 0), 86_400_000, 'at most a day');
  t.is(retryAfterMs('soon', 0), undefined);
  t.is(retryAfterMs(undefined, 0), undefined);
});

test('a receiver that always fails: ten attempts on the schedule (each signed anew, same webhook-id), then dead; retry revives', async (t) => {
  const { s, receiver } = await setupWith(t, [fail]);
  await send(s, logs(s, 2));
  await runUntil(s, async () => (await status(s))?.dead === 2, 1_000, 10_000);
  await runUntil(s, async () => (await status(s))?.dead === 2, 60_000, 100 * 3_600_000);
  t.like(await status(s), { pending: 0, delivered: 0, dead: 2, last_error: 'HTTP 500' });
  t.is(receiver.received.length, 10, 'immediately, then after 9 waits');
  const gaps = receiver.received
    .slice(1)
    .map((request, index) => request.receivedAt - (receiver.received[index]?.receivedAt ?? 0));
  gaps.forEach((gap, index) => {
    const base = RETRY_SCHEDULE_MS[index] ?? 0;
    // The clock steps 1 s then 60 s at a time: an attempt is seen at most one step late.
    t.true(gap >= base && gap <= base * (1 + RETRY_JITTER) + 60_000, `wait ${index + 1}: ${gap} ms for ${base} ms`);
  });
  t.is(
    new Set(receiver.received.map((request) => request.headers['webhook-id'])).size,
    1,
    'the same webhook-id on every retry',
  );
  t.is(
    new Set(receiver.received.map((request) => request.headers['webhook-timestamp'])).size,
    10,
    'each attempt signed at its own time',
  );
  t.true(
    receiver.received.every((request) => verifies(s.secret, request)),
    'every attempt verifies at its arrival',
  );

  s.app.clock.advance(48 * 3_600_000);
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, 10, 'dead stays dead');
  receiver.answers = [ok];
  t.deepEqual(await s.app.ctx.outbox.revive(s.parking.id, s.app.clock.now()), { revived: 1, enabledUrls: [] });
  await s.app.ctx.forwarding.runOnce();
  t.like(await status(s), { pending: 0, delivered: 2, dead: 0 });
});

test('a receiver that fails then recovers: the same webhook-id and body, nothing lost', async (t) => {
  const { s, receiver } = await setupWith(t, [fail, fail, ok]);
  await send(s, logs(s, 3));
  await s.app.ctx.forwarding.runOnce();
  t.like(await status(s), { pending: 3, delivered: 0, last_error: 'HTTP 500' });
  s.app.clock.advance(4_999);
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'not before 5 s');
  s.app.clock.advance(1_001); // 6 s: 5 s and its jitter
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  s.app.clock.advance(299_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'the second retry waits 5 minutes');
  s.app.clock.advance(61_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  t.is(receiver.received.length, 3);
  t.is(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id across retries');
  t.is(new Set(receiver.received.map((r) => r.body)).size, 1, 'the same records');
  t.true(receiver.received.every((request) => verifies(s.secret, request)));
  t.like(await status(s), { pending: 0, delivered: 3, dead: 0, last_error: null });
});

test('429 with Retry-After: 120 is honoured (the schedule alone would say 5 s)', async (t) => {
  const { s, receiver } = await setupWith(t, [tooMany(120), ok]);
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.like(await status(s), { pending: 1, last_error: 'HTTP 429 (Retry-After 120 s)' });
  s.app.clock.advance(119_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'not before the 120 s');
  s.app.clock.advance(1_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  t.like(await status(s), { delivered: 1 });
  t.true(receiver.received.every((request) => verifies(s.secret, request)));
});

test('503 with a Retry-After date is honoured', async (t) => {
  const { s, receiver } = await setupWith(t, [ok]);
  receiver.answers = [unavailableUntil(new Date(s.app.clock.now() + 600_000)), ok];
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  s.app.clock.advance(599_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'not before the date');
  s.app.clock.advance(1_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  t.like(await status(s), { delivered: 1 });
});

test('410 Gone disables the URL: nothing more is sent (queued logs wait), status shows it, retry revives it', async (t) => {
  const { s, receiver } = await setupWith(t, [gone]);
  await send(s, logs(s, 150)); // two deliveries
  t.is(await s.app.ctx.forwarding.runOnce(), 1, 'the second delivery is not tried after the 410');
  t.like(await status(s), { pending: 150, delivered: 0, dead: 0, disabled_at: s.app.clock.now() });
  t.regex((await status(s))?.last_error ?? '', /^HTTP 410 Gone/);
  await send(s, logs(s, 1));
  s.app.clock.advance(7 * 24 * 3_600_000);
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'a week later: still nothing sent');
  t.is(
    await s.app.ctx.outbox.nextDue(),
    undefined,
    'the worker has nothing due (it does not spin on the disabled URL)',
  );
  t.is(receiver.received.length, 1);
  t.is(await countRows(s.app, 'forwarding_outbox'), 151, 'nothing lost');

  receiver.answers = [ok];
  t.deepEqual(await s.app.ctx.outbox.revive(s.parking.id, s.app.clock.now()), {
    revived: 0,
    enabledUrls: [receiver.url],
  });
  t.is(await s.app.ctx.forwarding.runOnce(), 3);
  t.like(await status(s), { pending: 0, delivered: 151, disabled_at: null });
  t.true(receiver.received.every((request) => verifies(s.secret, request)));
});

for (const [label, config, timeoutMs] of [
  ['the default 15 s', {}, 15_000],
  ['FORWARDING_TIMEOUT_MS=3000', { forwardingTimeoutMs: 3_000 }, 3_000],
] as const) {
  test(`a receiver that hangs past the attempt timeout (${label}, on the injected clock) is retried and recovers`, async (t) => {
    const { s, receiver } = await setupWith(t, [hang, ok], config);
    await send(s, logs(s, 1));
    let finished = false;
    const pass = s.app.ctx.forwarding.runOnce().then(() => {
      finished = true;
    });
    await receiver.waitFor(1);
    // The timeout is a timer on the injected clock: the negative is proved by
    // that timer still pending 1 ms before (the receiver hangs, nothing else
    // can end the pass), and its firing on time is the positive.
    const pending = s.app.clock.pendingTimers;
    t.true(pending > 0, 'the timeout is on the injected clock');
    s.app.clock.advance(timeoutMs - 1);
    t.is(s.app.clock.pendingTimers, pending, 'no timer fell due before the timeout');
    t.false(finished, 'still waiting');
    s.app.clock.advance(1);
    t.is(s.app.clock.pendingTimers, pending - 1, 'the timeout fired');
    await pass;
    t.like(await status(s), { pending: 1, last_error: `timeout after ${timeoutMs / 1000} s` });
    s.app.clock.advance(6_000);
    await s.app.ctx.forwarding.runOnce();
    t.like(await status(s), { pending: 0, delivered: 1 });
    t.true(receiver.received.every((request) => verifies(s.secret, request)));
  });
}

test('301 is a failure and is not followed; the next attempt recovers', async (t) => {
  const { s, receiver } = await setupWith(t, [redirect, ok]);
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, 1, 'the redirect target got nothing');
  t.like(await status(s), { pending: 1, delivered: 0, last_error: 'HTTP 301' });
  s.app.clock.advance(6_000);
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, 2);
  t.true(
    receiver.received.every(
      (request) => request.headers.host?.startsWith('127.0.0.1') === true && verifies(s.secret, request),
    ),
  );
  t.like(await status(s), { pending: 0, delivered: 1 });
});
