// A forwarding URL that keeps failing writes a line per step of the retry
// schedule, not one per failed delivery: every box log of the parking is a
// delivery of its own failing at each step. On the injected clock, against a
// real local receiver answering 500, with the API's real logger.
import { Writable } from 'node:stream';
import test, { type ExecutionContext } from 'ava';
import { clockAtNow, forwardingSetup, logs, send } from '../../helpers/forwarding.js';
import { fail, ok, startReceiver } from '../../helpers/receiver.js';

interface LogLine {
  msg?: string;
  url?: string;
  attempts?: number;
  failures_not_logged?: number;
}

/** The API's log lines, as pino writes them. */
function logLines(t: ExecutionContext): { stream: Writable; lines: () => LogLine[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  t.teardown(() => stream.destroy());
  const lines = (): LogLine[] =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  return { stream, lines };
}

test('five deliveries failing at each step: one line per URL per step, the others counted into the next line; a delivery resets it', async (t) => {
  const clock = clockAtNow();
  const receiver = await startReceiver(t, [fail], clock);
  const sink = logLines(t);
  const s = await forwardingSetup(t, receiver.url, { clock, logger: { level: 'info', stream: sink.stream } });
  const failures = () =>
    sink.lines().filter((line) => line.msg === 'forwarding failed; will retry' && line.url === receiver.url);
  const forwarding = s.app.ctx.forwarding;

  // Five box logs, each its own delivery, each failing its first attempt.
  for (let index = 0; index < 5; index += 1) {
    await send(s, logs(s, 1));
    t.is(await forwarding.runOnce(), 1);
  }
  t.is(receiver.received.length, 5);
  t.deepEqual(
    failures().map(({ attempts, failures_not_logged }) => ({ attempts, failures_not_logged })),
    [{ attempts: 1, failures_not_logged: undefined }],
    'one line for the first step',
  );

  // The second step (5 s and its jitter), then the third (5 min and its jitter): five attempts, one line each.
  clock.advance(6_000);
  t.is(await forwarding.runOnce(), 5);
  clock.advance(360_000);
  t.is(await forwarding.runOnce(), 5);
  t.is(receiver.received.length, 15);
  t.deepEqual(
    failures().map(({ attempts, failures_not_logged }) => ({ attempts, failures_not_logged })),
    [
      { attempts: 1, failures_not_logged: undefined },
      { attempts: 2, failures_not_logged: 4 },
      { attempts: 3, failures_not_logged: 4 },
    ],
  );

  // The receiver is back: a delivery goes through; the next outage is news again.
  receiver.answers = [ok];
  await send(s, logs(s, 1));
  t.is(await forwarding.runOnce(), 1);
  receiver.answers = [fail];
  await send(s, logs(s, 1));
  t.is(await forwarding.runOnce(), 1);
  t.deepEqual(
    failures().map(({ attempts }) => attempts),
    [1, 2, 3, 1],
  );
});
