// The link to a box on a bench whose power the suite can switch (the bench
// file's `power:` entry): the target of open-target.ts plus a restart() for
// the power-cycle case. A restart closes the link, cycles the power, waits
// the box's settle_ms, opens the link again (a USB serial port powered by
// the box vanishes and comes back: tried again until the limit) and waits
// for the box to answer. The limit (--wait-ms) runs from the end of
// settle_ms; a box that is not back by then fails the case naming it.
import { freshIssuers } from '../../conformance/suite-context.js';
import { signedAccessCommand, type BoxUnderTest } from '../../conformance/box-under-test.js';
import type { BarrierObservation, BoxTarget, Exchange } from '../../conformance/box-target.js';
import { sleep, type Clock } from '../../lib/clock.js';
import { messageOf } from '../../lib/message-of.js';
import type { PowerDriver } from '../../lib/power/power-driver.js';
import { powerDriverFor, powerUnavailable } from '../../lib/power/drivers.js';
import type { ConformanceOptions } from './flags.js';
import type { TargetOpener } from './open-target.js';

export interface PoweredTargetOptions {
  readonly power: PowerDriver;
  readonly reopen: TargetOpener;
  readonly box: BoxUnderTest;
  /** How long the box may take to answer after settle_ms, ms (--wait-ms). */
  readonly answerWithinMs: number;
  /** One probe's wait for its answer, ms (--answer-ms). */
  readonly answerMs: number;
  readonly clock: Clock;
}

/** A key_id above the suite's (SUITE_KEY_IDS), so the probe touches no key the cases use. */
const PROBE_KEY_ID = 0xffff_fff0;
/** Between two probes on a link that is down, ms. */
const LINK_DOWN_PAUSE_MS = 200;

export class PoweredTarget implements BoxTarget {
  #inner: BoxTarget;
  #badReportsBefore = 0;
  readonly #listeners: ((observation: BarrierObservation) => void)[] = [];

  constructor(
    inner: BoxTarget,
    private readonly options: PoweredTargetOptions,
  ) {
    this.#inner = inner;
  }

  get kind(): BoxTarget['kind'] {
    return this.#inner.kind;
  }

  get badReports(): number {
    return this.#badReportsBefore + this.#inner.badReports;
  }

  open(): Promise<void> {
    return this.#inner.open();
  }

  exchange(command: Buffer, timeoutMs: number): Promise<Exchange> {
    return this.#inner.exchange(command, timeoutMs);
  }

  sendGarbage(): Promise<void> {
    return this.#inner.sendGarbage();
  }

  onBarrier(listener: (observation: BarrierObservation) => void): void {
    this.#listeners.push(listener);
    this.#inner.onBarrier(listener);
  }

  async restart(): Promise<void> {
    const { power, clock, answerWithinMs } = this.options;
    this.#badReportsBefore += this.#inner.badReports;
    await this.#inner.close().catch(() => undefined);
    // A switch that fails still leaves the link open again, for the cases after this one.
    let failed: Error | undefined;
    try {
      await power.cycle();
      await sleep(clock, power.settleMs);
    } catch (error) {
      failed = error instanceof Error ? error : new Error(String(error));
    }
    const deadline = clock.now() + answerWithinMs;
    try {
      this.#inner = await this.options.reopen(deadline);
    } catch (error) {
      throw (
        failed ??
        new Error(
          `the box's link was not back within ${answerWithinMs} ms (--wait-ms) after power on and settle_ms ${power.settleMs} ms: ${messageOf(error)}`,
          { cause: error },
        )
      );
    }
    if (failed !== undefined) throw failed;
    for (const listener of this.#listeners) this.#inner.onBarrier(listener);
    if (!(await this.#answers(deadline)))
      throw new Error(
        `the box did not answer within ${answerWithinMs} ms (--wait-ms) after power on and settle_ms ${power.settleMs} ms`,
      );
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Asks until `deadline` with an ACCESS_SIGNED by an issuer the box does
   * not hold: any answer (AUTH_FAILED) says the box is back, and it spends
   * no try, no control sequence and no revocation. */
  async #answers(deadline: number): Promise<boolean> {
    const { clock, box, answerMs } = this.options;
    const stranger = freshIssuers().current.privateKey;
    const now = Math.floor(clock.now() / 1000);
    const probe = signedAccessCommand(box, stranger, {
      keyId: PROBE_KEY_ID,
      notBefore: now - 3600,
      notAfter: now + 3600,
      tries: 1,
    });
    for (;;) {
      const left = deadline - clock.now();
      if (left <= 0) return false;
      const exchange = await this.#inner.exchange(probe, Math.max(1, Math.min(left, answerMs)));
      if (exchange.response !== null) return true;
      if (exchange.error === 'link_down') await sleep(clock, Math.min(LINK_DOWN_PAUSE_MS, Math.max(0, left)));
    }
  }
}

/** The link, able to restart the box where the bench file gives it a power
 * switch that works here; where it does not work here (the prompt without a
 * terminal), the link alone, its `cannotRestart` saying why. */
export function withPower(
  target: BoxTarget,
  reopen: TargetOpener,
  box: BoxUnderTest,
  options: ConformanceOptions,
  clock: Clock,
): BoxTarget {
  if (options.power === undefined) return target;
  const power = powerDriverFor(options.power, { moduleId: options.provisioning.moduleId });
  const unavailable = powerUnavailable(power);
  if (unavailable !== undefined) return Object.assign(target, { cannotRestart: unavailable });
  return new PoweredTarget(target, {
    power,
    reopen,
    box,
    // The limit after power on: --wait-ms, or the answer time when --wait-ms is 0 (none).
    answerWithinMs: Math.max(options.waitMs, options.answerMs),
    answerMs: options.answerMs,
    clock,
  });
}
