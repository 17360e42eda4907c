// The suite's LinkCapture: after each frame recorded on its link (a serial
// run that makes a command, response or status report link frame; a BLE
// frame; the frame of an MQTT message), what the suite reads inside it with
// the box's keys, recorded right after it on the same interface
// (docs/capture.md, Opened records). A response is opened for the command
// it answers: the one of the last few sent whose nonce its tag verifies
// with; else none (a status report); else the last command sent, and then
// it shows as not verified. The serial runs the suite sends as garbage on
// purpose are marked not a frame, the well-formed response link frame among
// them too (a box drops it: it takes commands and status requests).
import { LinkType, tryDecodeLinkFrame, verifyResponse } from '../../firmware-protocol/index.js';
import { CaptureDirection, LinkCapture } from '../../lib/capture/link-capture.js';
import { openedCommandData, openedResponseData, type BoxKeys } from '../../lib/capture/opened.js';
import type { CaptureLinkName } from '../../lib/capture/record.js';
import type { CaptureSink } from '../../lib/capture/sink.js';

/** The keys the suite opens frames with: those of the box under test. */
export interface SuiteKeys extends BoxKeys {
  readonly boxKey: Uint8Array;
}

/** Commands kept to find the one a response answers: more than the suite
 * ever has unanswered (one at a time, and the late answers of a timeout). */
const RECENT_COMMANDS = 8;

export class OpeningLinkCapture extends LinkCapture {
  readonly #keys: SuiteKeys;
  /** The commands sent, newest first. */
  readonly #sent: Buffer[] = [];
  /** Garbage is being sent (sendingGarbage). */
  #garbage = 0;

  constructor(
    sink: CaptureSink,
    link: CaptureLinkName,
    name: string,
    keys: SuiteKeys,
    options: { readonly description?: string; readonly nowMicros?: () => bigint } = {},
  ) {
    super(sink, link, name, options);
    this.#keys = keys;
  }

  override wire(
    direction: CaptureDirection,
    bytes: Uint8Array,
    options: { moduleId?: number; notAFrame?: boolean } = {},
  ): void {
    const marked =
      this.#garbage > 0 && direction === CaptureDirection.toBox ? { ...options, notAFrame: true } : options;
    super.wire(direction, bytes, marked);
    if (marked.notAFrame === true || bytes.length < 2 || bytes[bytes.length - 1] !== 0) return;
    const decoded = tryDecodeLinkFrame(bytes, 0, bytes.length - 1);
    if (typeof decoded === 'string') return;
    const carriesFrame =
      direction === CaptureDirection.toBox
        ? decoded.type === LinkType.COMMAND
        : decoded.type === LinkType.RESPONSE || decoded.type === LinkType.STATUS_REPORT;
    if (carriesFrame) this.#open(direction, decoded.payload, options.moduleId);
  }

  /** Runs `work`, which puts garbage on the link: the serial runs to the
   * box recorded until it ends are marked not a frame. */
  async sendingGarbage(work: () => Promise<void>): Promise<void> {
    this.#garbage++;
    try {
      await work();
    } finally {
      this.#garbage--;
    }
  }

  override frame(direction: CaptureDirection, frame: Uint8Array, moduleId?: number): void {
    super.frame(direction, frame, moduleId);
    this.#open(direction, frame, moduleId);
  }

  #open(direction: CaptureDirection, frame: Uint8Array, moduleId: number | undefined): void {
    if (direction === CaptureDirection.fromBox) {
      this.opened(direction, openedResponseData(frame, this.#keys.boxKey, this.#answered(frame)), moduleId);
      return;
    }
    // Every command is kept, a malformed one too: the box answers it.
    this.#sent.unshift(Buffer.from(frame));
    this.#sent.length = Math.min(this.#sent.length, RECENT_COMMANDS);
    const data = openedCommandData(frame, this.#keys);
    if (data !== null) this.opened(direction, data, moduleId);
  }

  /** The command `response` answers; null for a status report. */
  #answered(response: Uint8Array): Buffer | null {
    const { boxKey } = this.#keys;
    const answered = this.#sent.find((command) => verifyResponse(response, boxKey, command));
    if (answered !== undefined) return answered;
    if (verifyResponse(response, boxKey, null)) return null;
    return this.#sent[0] ?? null;
  }
}
