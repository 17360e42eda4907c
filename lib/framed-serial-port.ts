// A serial port that speaks the link framing of docs/protocol.md (Serial link framing) and survives
// the cable being pulled: it reopens with backoff, parses frames through the
// link decoder, and writes only while open. The simulator's box side and the
// gateway's side of a cable are both built on it. The port itself comes from
// a factory, so the transport is injected: serialport's by default,
// one on @serialport/binding-mock in the unit tests.
import { EventEmitter } from 'node:events';
import { SerialPort } from 'serialport';
import { encodeLinkFrame, type LinkType } from '../firmware-protocol/index.js';
import type { Clock, TimerHandle } from './clock.js';
import { backoffDelay, defaultBackoff, type BackoffPolicy } from './backoff.js';
import { LinkFrameParser, type LinkFrame } from './link-frame-stream.js';
import { silentLogger, type Logger } from './logger.js';
import type { SerialTarget } from './serial-target.js';
import { messageOf } from './message-of.js';

type PortCallback = (error: Error | null) => void;

/** What this module uses of a serialport stream: `SerialPort`, and
 * `SerialPortMock` or any `SerialPortStream` over another binding, are one. */
export interface SerialPortLike {
  readonly isOpen: boolean;
  open(callback: PortCallback): void;
  flush(callback: PortCallback): void;
  write(data: Buffer, callback: (error: Error | null | undefined) => void): boolean;
  close(callback?: PortCallback): void;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Makes the port for a path, not yet open (it is opened with `open()`). */
export type SerialPortFactory = (options: { readonly path: string; readonly baudRate: number }) => SerialPortLike;

/** The real serial port, through serialport's native binding. */
export const systemSerialPort: SerialPortFactory = ({ path, baudRate }) =>
  new SerialPort({ path, baudRate, autoOpen: false });

export interface FramedSerialPortOptions {
  readonly target: SerialTarget;
  /** Makes each port opened (once, then again after every replug); default `systemSerialPort`. */
  readonly createPort?: SerialPortFactory;
  readonly clock: Clock;
  readonly backoff?: BackoffPolicy;
  readonly logger?: Logger;
  /** Discard what the other side sent before the port was opened. */
  readonly flushOnOpen?: boolean;
}

export interface FramedSerialPortEvents {
  /** The port is open (first time or again after a replug). */
  open: [];
  /** The port went away; it is being reopened. */
  closed: [];
  frame: [frame: LinkFrame];
}

export class FramedSerialPort extends EventEmitter<FramedSerialPortEvents> {
  /** Times the port was opened. */
  opens = 0;
  readonly #parser = new LinkFrameParser();
  readonly #logger: Logger;
  #port: SerialPortLike | undefined;
  #attempt = 0;
  #reopenTimer: TimerHandle | undefined;
  #stopped = false;

  constructor(private readonly options: FramedSerialPortOptions) {
    super();
    this.#logger = (options.logger ?? silentLogger).child({ path: options.target.path });
    this.#parser.on('data', (frame: LinkFrame) => this.emit('frame', frame));
  }

  get path(): string {
    return this.options.target.path;
  }

  get isOpen(): boolean {
    return this.#port?.isOpen === true;
  }

  /** Frames dropped by the link decoder, by reason. */
  get decoderCounters(): LinkFrameParser['counters'] {
    return this.#parser.counters;
  }

  /** Frames dropped so far (bad CRC, bad COBS, oversize, unknown type). */
  get badFrames(): number {
    const counters = this.#parser.counters;
    return counters.badCrc + counters.badCobs + counters.oversize + counters.unknownType;
  }

  /** Opens the port. With `retry`, a port that is not there yet is retried
   * with backoff instead of rejecting. */
  async start(retry = false): Promise<void> {
    try {
      await this.#open();
    } catch (error) {
      if (!retry) throw error;
      this.#logger.warn({ err: messageOf(error) }, 'serial port not available yet; retrying');
      this.#scheduleReopen();
    }
  }

  /** Writes a link frame; false (nothing written) when the port is not open. */
  send(type: LinkType, payload: Uint8Array): boolean {
    const port = this.#port;
    if (port?.isOpen !== true) return false;
    port.write(encodeLinkFrame(type, payload), (error) => {
      if (error) this.#failed(port, error);
    });
    return true;
  }

  /** Writes bytes as they are, unframed: for test tools that put garbage on
   * the line (conformance). False (nothing written) when the port is not open. */
  writeRaw(bytes: Uint8Array): boolean {
    const port = this.#port;
    if (port?.isOpen !== true) return false;
    port.write(Buffer.from(bytes), (error) => {
      if (error) this.#failed(port, error);
    });
    return true;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#reopenTimer !== undefined) this.options.clock.clearTimeout(this.#reopenTimer);
    const port = this.#port;
    if (port?.isOpen === true) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  async #open(): Promise<void> {
    const { path, baudRate } = this.options.target;
    const port = (this.options.createPort ?? systemSerialPort)({ path, baudRate });
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    if (this.options.flushOnOpen === true) await new Promise<void>((resolve) => port.flush(() => resolve()));
    this.#parser.reset();
    this.#port = port;
    this.#attempt = 0;
    this.opens++;
    port.on('data', (chunk: Buffer) => this.#parser.write(chunk));
    port.on('close', () => this.#closed());
    port.on('error', (error) => this.#failed(port, error));
    this.#logger.info({ baudRate }, 'serial port open');
    this.emit('open');
  }

  /** A read or write failed (the device went away, EIO on a pty whose other
   * end closed): close the port so it is reopened like an unplugged cable. */
  #failed(port: SerialPortLike, error: Error): void {
    this.#logger.warn({ err: error.message }, 'serial port failed');
    if (port.isOpen) port.close();
  }

  #closed(): void {
    if (this.#stopped) return;
    this.#logger.warn({}, 'serial port closed; reopening with backoff');
    this.emit('closed');
    this.#scheduleReopen();
  }

  #scheduleReopen(): void {
    if (this.#stopped || this.#reopenTimer !== undefined) return;
    const delay = backoffDelay(this.options.backoff ?? defaultBackoff, this.#attempt++);
    this.#reopenTimer = this.options.clock.setTimeout(() => {
      this.#reopenTimer = undefined;
      if (this.#stopped) return;
      this.#open().catch((error: unknown) => {
        this.#logger.debug({ err: messageOf(error) }, 'serial port not back yet');
        this.#scheduleReopen();
      });
    }, delay);
  }
}
