// The suite on a serial cable (docs/protocol.md, Serial link framing), through the
// gateway's SerialBoxLink: commands as 0x01 frames, responses matched by
// their echo, status reports (asked for on open, sent on barrier changes)
// show the barrier. With a capture, the link records the bytes both ways.
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { SerialTarget } from '../../lib/serial-target.js';
import { SerialBoxLink } from '../../lib/serial-box-link.js';
import type { OpeningLinkCapture } from '../capture/opening-link-capture.js';
import type { BarrierObservation, BoxTarget, Exchange } from '../box-target.js';
import { BarrierFeed } from './barrier-feed.js';
import { serialGarbage } from './garbage.js';
import { reportedBarrier } from './status-reports.js';

export interface SerialBoxTargetOptions {
  readonly target: SerialTarget;
  readonly boxKey: Uint8Array;
  readonly clock: Clock;
  readonly logger?: Logger;
  /** Interface `serial:<port path>`. */
  readonly capture?: OpeningLinkCapture;
}

export class SerialBoxTarget implements BoxTarget {
  readonly kind = 'serial' as const;
  badReports = 0;
  readonly #link: SerialBoxLink;
  readonly #barrier = new BarrierFeed();

  constructor(private readonly options: SerialBoxTargetOptions) {
    this.#link = new SerialBoxLink({
      target: options.target,
      clock: options.clock,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.capture === undefined ? {} : { capture: options.capture }),
    });
    this.#link.on('report', (_report, frame) => {
      const observation = reportedBarrier(frame, options.boxKey, options.clock.now());
      if (observation === null) this.badReports++;
      else this.#barrier.push(observation);
    });
  }

  /** Opens the port (a port that is not there fails at once, with the
   * system's reason); the link then asks the box for a status report. */
  async open(): Promise<void> {
    await this.#link.start(false);
  }

  async exchange(command: Buffer, timeoutMs: number): Promise<Exchange> {
    const started = this.options.clock.now();
    const outcome = await this.#link.send(command, timeoutMs);
    const elapsedMs = this.options.clock.now() - started;
    return 'response' in outcome
      ? { command, response: outcome.response, elapsedMs }
      : { command, response: null, error: outcome.error, elapsedMs };
  }

  async sendGarbage(): Promise<void> {
    const send = async (): Promise<void> => {
      for (const bytes of serialGarbage()) await this.#link.writeRaw(bytes);
    };
    await (this.options.capture?.sendingGarbage(send) ?? send());
  }

  onBarrier(listener: (observation: BarrierObservation) => void): void {
    this.#barrier.listen(listener);
  }

  /** Responses that matched no command (a wrong kind or key_id echo shows up so). */
  get unmatched(): number {
    return this.#link.counters.unmatched;
  }

  close(): Promise<void> {
    return this.#link.stop();
  }
}
