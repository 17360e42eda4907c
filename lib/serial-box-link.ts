// The gateway's end of a box's serial cable (docs/protocol.md, Serial link
// framing). On every open it flushes what the box sent before and asks for a
// status report, which names the box (module_id): no mapping file needed.
// Commands go out as 0x01 frames, one response (0x81) is matched to each;
// status reports (0x82) tell the box's state. Unplug and replug are survived.
// With a capture, the bytes both ways are recorded (docs/capture.md), with
// the box's module id once its status report named it.
import { EventEmitter } from 'node:events';
import type { Clock } from './clock.js';
import type { BackoffPolicy } from './backoff.js';
import { FramedSerialPort } from './framed-serial-port.js';
import type { LinkFrame } from './link-frame-stream.js';
import { silentLogger, type Logger } from './logger.js';
import type { SerialTarget } from './serial-target.js';
import { LinkType, parseResponse, type ParsedResponse } from '../firmware-protocol/index.js';
import { ResponseWaiter, type WaitOutcome } from './response-waiter.js';
import { CaptureDirection, type LinkCapture } from './capture/link-capture.js';

export interface SerialBoxLinkOptions {
  readonly target: SerialTarget;
  readonly clock: Clock;
  readonly backoff?: BackoffPolicy;
  readonly logger?: Logger;
  /** Offered each response that answers no command sent on this link (a
   * late answer to a command of a gateway's previous run,
   * gateway/command-journal.ts); true when it took it (it is not counted as
   * unmatched then). */
  readonly claimUnmatched?: (response: Buffer) => boolean;
  /** Records the bytes written and read on this cable. */
  readonly capture?: LinkCapture;
}

export interface SerialBoxLinkEvents {
  /** A status report arrived (the box named itself, or its state changed). */
  report: [report: ParsedResponse, frame: Buffer];
  /** The port went away. */
  down: [];
  /** The port is open again (a status request was sent). */
  up: [];
}

export interface SerialBoxLinkCounters {
  /** Responses that matched no pending command, frames that are no response. */
  unmatched: number;
  /** Frames of a type a box does not send (0x01, 0x02). */
  unexpectedFrames: number;
}

export class SerialBoxLink extends EventEmitter<SerialBoxLinkEvents> {
  readonly counters: SerialBoxLinkCounters = { unmatched: 0, unexpectedFrames: 0 };
  readonly #port: FramedSerialPort;
  readonly #waiter: ResponseWaiter;
  readonly #logger: Logger;
  readonly #claimUnmatched: ((response: Buffer) => boolean) | undefined;
  #moduleId: number | undefined;
  /** Commands go out one at a time: a box answers in order, and a slow
   * cable must not interleave frames. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: SerialBoxLinkOptions) {
    super();
    this.#logger = (options.logger ?? silentLogger).child({ component: 'gateway:serial' });
    this.#claimUnmatched = options.claimUnmatched;
    const { capture, ...portOptions } = options;
    this.#port = new FramedSerialPort({
      ...portOptions,
      logger: this.#logger,
      flushOnOpen: true,
      ...(capture === undefined
        ? {}
        : { capture: { link: capture, reads: CaptureDirection.fromBox, moduleId: () => this.#moduleId } }),
    });
    this.#waiter = new ResponseWaiter(options.clock);
    this.#port.on('open', () => {
      // docs/protocol.md, Serial link framing: a gateway sends a status request whenever it opens a port.
      this.#port.send(LinkType.STATUS_REQUEST, Buffer.alloc(0));
      this.emit('up');
    });
    this.#port.on('closed', () => {
      this.#waiter.failAll();
      this.emit('down');
    });
    this.#port.on('frame', (frame) => this.#frame(frame));
  }

  get path(): string {
    return this.#port.path;
  }

  /** The box on this port, once its first status report came. */
  get moduleId(): number | undefined {
    return this.#moduleId;
  }

  get isOpen(): boolean {
    return this.#port.isOpen;
  }

  /** Frames dropped by the link decoder (bad CRC, bad COBS, oversize, unknown type). */
  get badFrames(): number {
    return this.#port.badFrames;
  }

  /** Opens the port, retrying with backoff while it is not there (without
   * `retry`: rejects at once when the port cannot be opened). */
  start(retry = true): Promise<void> {
    return this.#port.start(retry);
  }

  stop(): Promise<void> {
    this.#waiter.failAll();
    return this.#port.stop();
  }

  /** Sends a command; resolves with the response, a timeout, or link_down
   * (nothing is sent to a port that is not open). */
  send(command: Buffer, timeoutMs: number): Promise<WaitOutcome> {
    const result = this.#queue.then(() => {
      if (!this.#port.isOpen) return { error: 'link_down' } as const;
      const outcome = this.#waiter.expect(command, timeoutMs);
      this.#port.send(LinkType.COMMAND, command);
      return outcome;
    });
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Puts raw, unframed bytes on the line, in turn with the commands (the
   * conformance suite's garbage). False when the port is not open. */
  writeRaw(bytes: Uint8Array): Promise<boolean> {
    const result = this.#queue.then(() => this.#port.writeRaw(bytes));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  #frame(frame: LinkFrame): void {
    switch (frame.type) {
      case LinkType.RESPONSE:
        if (!this.#waiter.offer(frame.payload) && this.#claimUnmatched?.(frame.payload) !== true)
          this.counters.unmatched++;
        return;
      case LinkType.STATUS_REPORT:
        this.#report(frame.payload);
        return;
      case LinkType.COMMAND:
      case LinkType.STATUS_REQUEST:
        this.counters.unexpectedFrames++;
        return;
    }
  }

  #report(frame: Buffer): void {
    let report: ParsedResponse;
    try {
      report = parseResponse(frame);
    } catch {
      this.counters.unmatched++;
      return;
    }
    if (this.#moduleId !== report.moduleId) {
      this.#logger.info({ module_id: report.moduleId, previous: this.#moduleId }, 'box identified on port');
      this.#moduleId = report.moduleId;
    }
    this.emit('report', report, frame);
  }
}
