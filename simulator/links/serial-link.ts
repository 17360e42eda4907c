// A simulated box on a serial port, as a real box on a USB cable
// (docs/protocol.md, Serial link framing): commands (0x01) and status requests
// (0x02) in; responses (0x81) and status reports (0x82) out, the latter at
// start-up, on every change of the barrier, and when asked. If the port
// vanishes it is reopened with backoff. With a capture, the bytes both ways
// are recorded on the box's side, each frame's opened record after it.
import type { Clock } from '../../lib/clock.js';
import type { BackoffPolicy } from '../../lib/backoff.js';
import { FramedSerialPort } from '../../lib/framed-serial-port.js';
import type { LinkFrame } from '../../lib/link-frame-stream.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { SerialTarget } from '../../lib/serial-target.js';
import { LinkType } from '../../firmware-protocol/index.js';
import type { BarrierState } from '../barrier.js';
import type { SimulatedBox } from '../simulated-box.js';
import { messageOf } from '../../lib/message-of.js';
import { CaptureDirection } from '../../lib/capture/link-capture.js';
import type { BoxCapture } from './box-capture.js';

export interface BoxSerialLinkOptions {
  readonly target: SerialTarget;
  readonly clock: Clock;
  readonly backoff?: BackoffPolicy;
  readonly logger?: Logger;
  /** Discard what the other side sent before the port opened (a box that
   * powers on has heard nothing of what came while it was off). */
  readonly flushOnOpen?: boolean;
  /** Records this link (interface `serial:<path>`). */
  readonly capture?: BoxCapture;
}

export interface BoxSerialCounters {
  commands: number;
  statusRequests: number;
  /** Well-formed frames of a type a box does not take (0x81, 0x82). */
  unexpectedFrames: number;
}

export class BoxSerialLink {
  readonly counters: BoxSerialCounters = { commands: 0, statusRequests: 0, unexpectedFrames: 0 };
  readonly #port: FramedSerialPort;
  readonly #logger: Logger;
  readonly #capture: BoxCapture | undefined;
  #lastBarrier: BarrierState;
  readonly #onChange = (): void => this.#barrierMaybeChanged();

  constructor(
    readonly box: SimulatedBox,
    options: BoxSerialLinkOptions,
  ) {
    this.#logger = (options.logger ?? silentLogger).child({ component: 'sim:serial', module_id: box.moduleId });
    const { capture, ...portOptions } = options;
    this.#capture = capture;
    this.#port = new FramedSerialPort({
      ...portOptions,
      logger: this.#logger,
      ...(capture === undefined
        ? {}
        : { capture: { link: capture.link, reads: CaptureDirection.toBox, moduleId: () => box.moduleId } }),
    });
    this.#lastBarrier = box.barrier.state;
    // docs/protocol.md, Serial link framing: a status report at start-up (and
    // whenever the cable comes back, which a box sees as a start).
    this.#port.on('open', () => this.#sendStatusReport());
    this.#port.on('frame', (frame) => this.#frame(frame));
  }

  get open(): boolean {
    return this.#port.isOpen;
  }

  get opens(): number {
    return this.#port.opens;
  }

  /** Frames the link decoder dropped, by reason. */
  get decoderCounters(): FramedSerialPort['decoderCounters'] {
    return this.#port.decoderCounters;
  }

  get badFrames(): number {
    return this.#port.badFrames;
  }

  /** Opens the port; rejects if it cannot be opened the first time. */
  async start(): Promise<void> {
    this.box.on('change', this.#onChange);
    await this.#port.start();
  }

  async stop(): Promise<void> {
    this.box.off('change', this.#onChange);
    await this.#port.stop();
  }

  #frame(frame: LinkFrame): void {
    switch (frame.type) {
      case LinkType.COMMAND:
        this.counters.commands++;
        this.#capture?.openedCommand(frame.payload);
        this.box.handleCommand(frame.payload).then(
          (response) => {
            if (response !== null) this.#send(LinkType.RESPONSE, response, frame.payload);
          },
          (error: unknown) => this.#logger.error({ err: messageOf(error) }, 'command could not be answered'),
        );
        return;
      case LinkType.STATUS_REQUEST:
        this.counters.statusRequests++;
        this.#sendStatusReport();
        return;
      case LinkType.RESPONSE:
      case LinkType.STATUS_REPORT:
        this.counters.unexpectedFrames++;
        return;
    }
  }

  /** Sends a response (to `command`) or a status report (null). */
  #send(type: LinkType, frame: Buffer, command: Buffer | null): void {
    if (this.#port.send(type, frame)) this.#capture?.openedResponse(frame, command);
  }

  #barrierMaybeChanged(): void {
    const barrier = this.box.barrier.state;
    if (barrier === this.#lastBarrier) return;
    this.#lastBarrier = barrier;
    this.#sendStatusReport();
  }

  #sendStatusReport(): void {
    // A report costs a box_seq: none is made while the cable is out.
    if (!this.#port.isOpen) return;
    this.box.statusReport().then(
      (report) => this.#send(LinkType.STATUS_REPORT, report, null),
      (error: unknown) => this.#logger.error({ err: messageOf(error) }, 'status report failed'),
    );
  }
}
