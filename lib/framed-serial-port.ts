// A serial port that speaks the link framing of docs/protocol.md (Serial link framing) and survives
// the cable being pulled: it reopens with backoff, parses frames through the
// link decoder, and writes only while open. The simulator's box side and the
// gateway's side of a cable are both built on it. The port itself comes from
// a factory, so the transport is injected: serialport's by default,
// one on @serialport/binding-mock in the unit tests. With a capture, it
// records every byte it writes and reads (docs/capture.md, wire bytes).
import { EventEmitter } from 'node:events';
import { SerialPort } from 'serialport';
import {
  LinkFrameDecoder,
  LinkType,
  RESPONSE_LENGTH,
  ResponseOffset,
  encodeLinkFrame,
  type LinkDecoderCounters,
} from '../firmware-protocol/index.js';
import type { Clock, TimerHandle } from './clock.js';
import { backoffDelay, defaultBackoff, type BackoffPolicy } from './backoff.js';
import type { LinkFrame } from './link-frame-stream.js';
import { silentLogger, type Logger } from './logger.js';
import type { SerialTarget } from './serial-target.js';
import { messageOf } from './message-of.js';
import { CaptureDirection, type LinkCapture } from './capture/link-capture.js';
import { WireRuns, type WireRun } from './capture/wire-runs.js';

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
  /** Records the bytes written and read on this port. */
  readonly capture?: SerialWireCapture;
}

/** A serial port's capture: each link frame written is one wire record;
 * the bytes read are split into runs at each 0x00, runs that made no frame
 * marked (what is held when the port closes, too). */
export interface SerialWireCapture {
  readonly link: LinkCapture;
  /** The direction of what this end reads: the box's end reads commands
   * (toBox), the gateway's or the suite's end reads answers (fromBox). */
  readonly reads: CaptureDirection;
  /** The box's module id, once known, for each record. */
  moduleId?(): number | undefined;
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
  /** The pure decoder, not the stream over it: each frame is passed on
   * within the read it completes, after the capture's record of its run. */
  readonly #decoder = new LinkFrameDecoder();
  readonly #logger: Logger;
  readonly #capture: PortCapture | undefined;
  #port: SerialPortLike | undefined;
  #attempt = 0;
  #reopenTimer: TimerHandle | undefined;
  #stopped = false;

  constructor(private readonly options: FramedSerialPortOptions) {
    super();
    this.#logger = (options.logger ?? silentLogger).child({ path: options.target.path });
    this.#capture = options.capture === undefined ? undefined : new PortCapture(options.capture);
  }

  get path(): string {
    return this.options.target.path;
  }

  get isOpen(): boolean {
    return this.#port?.isOpen === true;
  }

  /** Frames dropped by the link decoder, by reason. */
  get decoderCounters(): Readonly<LinkDecoderCounters> {
    return this.#decoder.counters;
  }

  /** Frames dropped so far (bad CRC, bad COBS, oversize, unknown type). */
  get badFrames(): number {
    const counters = this.#decoder.counters;
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
    const bytes = encodeLinkFrame(type, payload);
    this.#capture?.wrote(bytes);
    port.write(bytes, (error) => {
      if (error) this.#failed(port, error);
    });
    return true;
  }

  /** Writes bytes as they are, unframed: for test tools that put garbage on
   * the line (conformance). False (nothing written) when the port is not open. */
  writeRaw(bytes: Uint8Array): boolean {
    const port = this.#port;
    if (port?.isOpen !== true) return false;
    this.#capture?.wroteRaw(bytes);
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
    this.#decoder.reset();
    this.#port = port;
    this.#attempt = 0;
    this.opens++;
    port.on('data', (chunk: Buffer) => this.#read(chunk));
    port.on('close', () => this.#closed());
    port.on('error', (error) => this.#failed(port, error));
    this.#logger.info({ baudRate }, 'serial port open');
    this.emit('open');
  }

  #read(chunk: Buffer): void {
    const capture = this.#capture;
    if (capture === undefined) {
      this.#decode(chunk);
      return;
    }
    // Run by run, so that each run's record comes before what its frame sets off.
    for (const run of capture.runsOf(chunk)) {
      capture.recordRead(run);
      this.#decode(run.bytes);
    }
  }

  #decode(bytes: Buffer): void {
    for (const frame of this.#decoder.push(bytes)) this.emit('frame', frame);
  }

  /** A read or write failed (the device went away, EIO on a pty whose other
   * end closed): close the port so it is reopened like an unplugged cable. */
  #failed(port: SerialPortLike, error: Error): void {
    this.#logger.warn({ err: error.message }, 'serial port failed');
    if (port.isOpen) port.close();
  }

  #closed(): void {
    this.#capture?.readEnded();
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

/** The recording side of a port's capture. */
class PortCapture {
  readonly #reads = new WireRuns();
  readonly #capture: SerialWireCapture;
  readonly #writes: CaptureDirection;

  constructor(capture: SerialWireCapture) {
    this.#capture = capture;
    this.#writes = capture.reads === CaptureDirection.toBox ? CaptureDirection.fromBox : CaptureDirection.toBox;
  }

  /** A link frame written whole: one run, a frame. */
  wrote(bytes: Uint8Array): void {
    this.#capture.link.wire(this.#writes, bytes, { ...this.#moduleId() });
  }

  /** Raw bytes written (a test tool's garbage): split and marked as read bytes are. */
  wroteRaw(bytes: Uint8Array): void {
    const runs = new WireRuns();
    for (const run of runs.push(bytes)) this.#wire(this.#writes, run);
    const rest = runs.flush();
    if (rest !== undefined) this.#wire(this.#writes, rest);
  }

  /** The runs `chunk` completes (each to record, then decode, in turn). */
  runsOf(chunk: Buffer): WireRun[] {
    return this.#reads.push(chunk);
  }

  /** A run read. */
  recordRead(run: WireRun): void {
    this.#wire(this.#capture.reads, run);
  }

  /** The port closed: what is held made no frame. */
  readEnded(): void {
    const run = this.#reads.flush();
    if (run !== undefined) this.#wire(this.#capture.reads, run);
  }

  #wire(direction: CaptureDirection, run: WireRun): void {
    this.#capture.link.wire(direction, run.bytes, { ...this.#moduleId(run), notAFrame: !run.frame });
  }

  /** The module id known to the port's user, else the one a response or a
   * status report carries in the clear: the first report a box sends, the
   * one its module id is learned from, is recorded with it too. */
  #moduleId(run?: WireRun): { moduleId?: number } {
    const moduleId = this.#capture.moduleId?.() ?? moduleIdOf(run?.linkFrame);
    return moduleId === undefined ? {} : { moduleId };
  }
}

function moduleIdOf(frame: LinkFrame | undefined): number | undefined {
  if (frame === undefined || frame.payload.length !== RESPONSE_LENGTH) return undefined;
  if (frame.type !== LinkType.RESPONSE && frame.type !== LinkType.STATUS_REPORT) return undefined;
  return frame.payload.readUInt32BE(ResponseOffset.moduleId);
}
