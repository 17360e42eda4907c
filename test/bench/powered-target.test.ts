// PoweredTarget, in process over stand-in links: a restart closes the link,
// cycles the power, waits settle_ms, opens a new link and asks until the box
// answers; barrier listeners and bad report counts carry over to the new
// link; a box that stays silent fails naming the limit; a switch that fails
// still leaves a link open for the cases after it.
import test, { type ExecutionContext } from 'ava';
import { PoweredTarget } from '../../cli/conformance/powered-target.js';
import type { BarrierObservation, BoxTarget, Exchange } from '../../conformance/box-target.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { FrameKind, parseCommandHeader } from '../../firmware-protocol/index.js';
import { systemClock } from '../../lib/clock.js';
import { PowerError, type PowerDriver } from '../../lib/power/power-driver.js';
import { boxFile } from '../helpers/conformance-fixtures.js';

/** A link that answers every command with `answer` (or times out), and records what it was asked. */
class StandInLink implements BoxTarget {
  readonly kind = 'serial' as const;
  readonly sent: Buffer[] = [];
  readonly listeners: ((observation: BarrierObservation) => void)[] = [];
  closed = false;

  constructor(
    readonly answers: boolean,
    readonly badReports = 0,
  ) {}

  async open(): Promise<void> {}

  async exchange(command: Buffer, timeoutMs: number): Promise<Exchange> {
    this.sent.push(command);
    if (this.answers) return { command, response: Buffer.from([1]), elapsedMs: 1 };
    await new Promise((resolve) => setTimeout(resolve, timeoutMs));
    return { command, response: null, error: 'timeout', elapsedMs: timeoutMs };
  }

  async sendGarbage(): Promise<void> {}

  onBarrier(listener: (observation: BarrierObservation) => void): void {
    this.listeners.push(listener);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

class StandInSwitch implements PowerDriver {
  readonly description = 'stand-in';
  readonly calls: string[] = [];
  constructor(
    readonly settleMs: number,
    private readonly fails = false,
  ) {}
  on(): Promise<void> {
    this.calls.push('on');
    return Promise.resolve();
  }
  off(): Promise<void> {
    this.calls.push('off');
    return Promise.resolve();
  }
  cycle(): Promise<void> {
    this.calls.push('cycle');
    return this.fails ? Promise.reject(new PowerError('`relay` exit code 1: jammed')) : Promise.resolve();
  }
}

async function powered(
  t: ExecutionContext,
  power: PowerDriver,
  next: StandInLink,
): Promise<{ target: PoweredTarget; first: StandInLink; deadlines: number[] }> {
  const box = await boxFile(t, 4651);
  const first = new StandInLink(true, 2);
  const deadlines: number[] = [];
  const target = new PoweredTarget(first, {
    power,
    reopen: (deadline) => {
      deadlines.push(deadline);
      return Promise.resolve(next);
    },
    box: boxUnderTest(box.provisioning),
    answerWithinMs: 300,
    answerMs: 100,
    clock: systemClock,
  });
  return { target, first, deadlines };
}

test('a restart: link closed, power cycled, settle_ms waited, a new link, the box asked until it answers', async (t) => {
  const power = new StandInSwitch(150);
  const next = new StandInLink(true, 3);
  const { target, first, deadlines } = await powered(t, power, next);
  const listener = (): void => undefined;
  target.onBarrier(listener);
  const started = Date.now();
  await target.restart();
  t.true(Date.now() - started >= 140);
  t.true(first.closed);
  t.deepEqual(power.calls, ['cycle']);
  t.is(deadlines.length, 1);
  // The listener follows the box to its new link, and the old link's bad reports are kept.
  t.deepEqual(next.listeners, [listener]);
  t.is(target.badReports, 5);
  // The probe: an ACCESS_SIGNED of a key_id above the suite's, by an issuer the box does not hold.
  t.is(next.sent.length, 1);
  const header = parseCommandHeader(next.sent[0] ?? Buffer.alloc(0));
  t.true(header.ok);
  if (header.ok) {
    t.is(header.header.kind, FrameKind.ACCESS_SIGNED);
    t.is(header.header.keyId, 0xffff_fff0);
  }
});

test('a box silent after power on: the restart fails naming the limit', async (t) => {
  const { target } = await powered(t, new StandInSwitch(0), new StandInLink(false));
  await t.throwsAsync(target.restart(), {
    message: 'the box did not answer within 300 ms (--wait-ms) after power on and settle_ms 0 ms',
  });
});

test('a switch that fails: its error, and a link open again for the cases after it', async (t) => {
  const next = new StandInLink(true);
  const { target, deadlines } = await powered(t, new StandInSwitch(0, true), next);
  await t.throwsAsync(target.restart(), { instanceOf: PowerError, message: '`relay` exit code 1: jammed' });
  t.is(deadlines.length, 1);
  await target.exchange(Buffer.from([9]), 100);
  t.deepEqual(next.sent, [Buffer.from([9])]);
});
