// A simulated box on a serial port, as a real box on a USB cable
// (PROTOCOL.md, serial link framing): commands (0x01) and status requests
// (0x02) in; responses (0x81) and status reports (0x82) out, the latter at
// start-up, on every change of the barrier, and when asked. If the port
// vanishes it is reopened with backoff.
import { SerialPort } from 'serialport';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import { backoffDelay, defaultBackoff, type BackoffPolicy } from '../../lib/backoff.js';
import { LinkFrameParser, type LinkFrame } from '../../lib/link-frame-stream.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { SerialTarget } from '../../lib/serial-target.js';
import { encodeLinkFrame, LinkType } from '../../firmware-protocol/index.js';
import type { BarrierState } from '../barrier.js';
import type { SimulatedBox } from '../simulated-box.js';

export interface BoxSerialLinkOptions {
  readonly target: SerialTarget;
  readonly clock: Clock;
  readonly backoff?: BackoffPolicy;
  readonly logger?: Logger;
}

export interface BoxSerialCounters {
  commands: number;
  statusRequests: number;
  /** Well-formed frames of a type a box does not take (0x81, 0x82). */
  unexpectedFrames: number;
  opens: number;
}

export class BoxSerialLink {
  readonly counters: BoxSerialCounters = { commands: 0, statusRequests: 0, unexpectedFrames: 0, opens: 0 };
  readonly #logger: Logger;
  #port: SerialPort | undefined;
  #parser: LinkFrameParser | undefined;
  #attempt = 0;
  #reopenTimer: TimerHandle | undefined;
  #stopped = false;
  #lastBarrier: BarrierState;
  readonly #onChange = (): void => this.#barrierMaybeChanged();

  constructor(
    readonly box: SimulatedBox,
    private readonly options: BoxSerialLinkOptions,
  ) {
    this.#logger = (options.logger ?? silentLogger).child({ component: 'sim:serial', module_id: box.moduleId, path: options.target.path });
    this.#lastBarrier = box.barrier.state;
  }

  get open(): boolean {
    return this.#port?.isOpen === true;
  }

  /** Bad CRC, bad COBS, oversize and unknown-type frames seen so far. */
  get decoderCounters(): LinkFrameParser['counters'] | undefined {
    return this.#parser?.counters;
  }

  /** Opens the port; rejects if it cannot be opened the first time. */
  async start(): Promise<void> {
    this.box.on('change', this.#onChange);
    await this.#open();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.box.off('change', this.#onChange);
    if (this.#reopenTimer !== undefined) this.options.clock.clearTimeout(this.#reopenTimer);
    const port = this.#port;
    if (port?.isOpen === true) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  async #open(): Promise<void> {
    const { path, baudRate } = this.options.target;
    const port = new SerialPort({ path, baudRate, autoOpen: false });
    const parser = this.#parser ?? new LinkFrameParser();
    parser.reset();
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    this.#port = port;
    this.#parser = parser;
    this.#attempt = 0;
    this.counters.opens++;
    port.on('data', (chunk: Buffer) => parser.write(chunk));
    parser.removeAllListeners('data');
    parser.on('data', (frame: LinkFrame) => this.#frame(frame));
    port.on('close', () => this.#closed());
    port.on('error', (error) => this.#logger.warn({ err: error.message }, 'serial port error'));
    this.#logger.info({ baudRate }, 'serial port open');
    // PROTOCOL.md, serial link framing: a status report at start-up.
    this.#sendStatusReport();
  }

  #closed(): void {
    if (this.#stopped) return;
    this.#logger.warn({}, 'serial port closed; reopening');
    this.#scheduleReopen();
  }

  #scheduleReopen(): void {
    if (this.#stopped || this.#reopenTimer !== undefined) return;
    const delay = backoffDelay(this.options.backoff ?? defaultBackoff, this.#attempt++);
    this.#reopenTimer = this.options.clock.setTimeout(() => {
      this.#reopenTimer = undefined;
      this.#open().catch((error: unknown) => {
        this.#logger.debug({ err: (error as Error).message }, 'serial port not back yet');
        this.#scheduleReopen();
      });
    }, delay);
  }

  #frame(frame: LinkFrame): void {
    switch (frame.type) {
      case LinkType.COMMAND:
        this.counters.commands++;
        this.box.handleCommand(frame.payload).then(
          (response) => {
            if (response !== null) this.#send(LinkType.RESPONSE, response);
          },
          (error: unknown) => this.#logger.error({ err: (error as Error).message }, 'command could not be answered'),
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

  #barrierMaybeChanged(): void {
    const barrier = this.box.barrier.state;
    if (barrier === this.#lastBarrier) return;
    this.#lastBarrier = barrier;
    this.#sendStatusReport();
  }

  #sendStatusReport(): void {
    this.box.statusReport().then(
      (report) => this.#send(LinkType.STATUS_REPORT, report),
      (error: unknown) => this.#logger.error({ err: (error as Error).message }, 'status report failed'),
    );
  }

  #send(type: LinkType, payload: Buffer): void {
    const port = this.#port;
    // Nothing is written to a port that is not open; the gateway asks for a
    // status report when it (re)opens its end.
    if (port?.isOpen !== true) return;
    port.write(encodeLinkFrame(type, payload));
  }
}
