// A streaming decoder for serial link frames: chunks split anywhere in,
// frames out. Pure (no Node streams): a serial Transform wraps it elsewhere.
// docs/protocol.md, Serial link framing: a frame with a bad CRC or bad COBS is
// dropped and counted, never passed on; docs/protocol.md, Sizes: anything longer
// than 230 bytes (MAX_LINK_FRAME_LENGTH, the delimiter included) is dropped as
// bad framing.
import { MAX_LINK_ENCODED_LENGTH } from './constants.js';
import { type LinkFrame, tryDecodeLinkFrame } from './link-frame.js';

export interface LinkDecoderCounters {
  /** Frames passed on. */
  frames: number;
  badCrc: number;
  badCobs: number;
  /** Runs of more than 229 encoded bytes without a delimiter (230 with it). */
  oversize: number;
  /** Frames whose CRC matched but whose type byte is not defined. */
  unknownType: number;
}

/**
 * Feed it bytes with `push`; it returns the whole frames they complete.
 * Memory is bounded: at most 229 bytes are held between delimiters; a longer
 * run is counted once as oversize and skipped up to the next 0x00, where the
 * decoder resynchronizes. Empty runs (0x00 0x00) are idle line, not errors.
 * Bytes before a frame that are not followed by a 0x00 merge with that frame
 * and cost it (bad CRC): senders may start a session with a 0x00.
 */
export class LinkFrameDecoder {
  readonly counters: LinkDecoderCounters = { frames: 0, badCrc: 0, badCobs: 0, oversize: 0, unknownType: 0 };
  private readonly buffer = Buffer.allocUnsafe(MAX_LINK_ENCODED_LENGTH);
  private length = 0;
  private discarding = false;

  /** Bytes held while waiting for a delimiter. */
  get pending(): number {
    return this.length;
  }

  push(chunk: Uint8Array): LinkFrame[] {
    const frames: LinkFrame[] = [];
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let position = 0;
    while (position < bytes.length) {
      const zero = bytes.indexOf(0, position);
      const end = zero === -1 ? bytes.length : zero;
      this.append(bytes, position, end);
      if (zero === -1) break;
      this.endOfFrame(frames);
      position = zero + 1;
    }
    return frames;
  }

  /** Forgets a partial frame (e.g. when the port is reopened). */
  reset(): void {
    this.length = 0;
    this.discarding = false;
  }

  private append(bytes: Buffer, start: number, end: number): void {
    if (this.discarding || start === end) return;
    if (this.length + (end - start) > MAX_LINK_ENCODED_LENGTH) {
      this.counters.oversize++;
      this.discarding = true;
      this.length = 0;
      return;
    }
    bytes.copy(this.buffer, this.length, start, end);
    this.length += end - start;
  }

  private endOfFrame(frames: LinkFrame[]): void {
    const length = this.length;
    const wasDiscarding = this.discarding;
    this.reset();
    if (wasDiscarding || length === 0) return;
    const result = tryDecodeLinkFrame(this.buffer, 0, length);
    switch (result) {
      case 'BAD_COBS':
        this.counters.badCobs++;
        return;
      case 'BAD_CRC':
        this.counters.badCrc++;
        return;
      case 'OVERSIZE':
        this.counters.oversize++;
        return;
      case 'UNKNOWN_LINK_TYPE':
        this.counters.unknownType++;
        return;
      default:
        this.counters.frames++;
        frames.push(result);
    }
  }
}
