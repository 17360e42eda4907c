// Serial bytes as the capture records them: split at each 0x00 delimiter
// into runs, each with its delimiter, and marked when it made no frame (bad
// COBS, bad CRC, too long, an undefined link type, a lone delimiter). The
// link's own decoder (firmware-protocol's LinkFrameDecoder) is not asked:
// it keeps no bytes of what it drops, and the capture must show them.
import { MAX_LINK_ENCODED_LENGTH, tryDecodeLinkFrame, type LinkFrame } from '../../firmware-protocol/index.js';

export interface WireRun {
  readonly bytes: Buffer;
  /** False when these bytes made no frame. */
  readonly frame: boolean;
  /** The link frame they made, when they made one. */
  readonly linkFrame?: LinkFrame;
}

/** The most bytes held while waiting for a delimiter: a longer run is
 * recorded in pieces of this size, each marked as no frame. */
export const MAX_HELD_WIRE_BYTES = 1024;

export class WireRuns {
  #held: Buffer[] = [];
  #heldLength = 0;
  /** The run being held began with pieces recorded already: it is no frame. */
  #overlong = false;

  /** The runs `chunk` completes (and pieces of an overlong one). */
  push(chunk: Uint8Array): WireRun[] {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const runs: WireRun[] = [];
    let position = 0;
    while (position < bytes.length) {
      const zero = bytes.indexOf(0, position);
      const end = zero === -1 ? bytes.length : zero + 1;
      this.#hold(bytes.subarray(position, end), runs);
      if (zero !== -1) runs.push(this.#take());
      position = end;
    }
    return runs;
  }

  /** What is held without a delimiter (the link closed), as no frame. */
  flush(): WireRun | undefined {
    if (this.#heldLength === 0) return undefined;
    return { bytes: this.#drain(), frame: false };
  }

  #hold(piece: Buffer, runs: WireRun[]): void {
    let rest = piece;
    while (this.#heldLength + rest.length > MAX_HELD_WIRE_BYTES) {
      const room = MAX_HELD_WIRE_BYTES - this.#heldLength;
      this.#held.push(rest.subarray(0, room));
      this.#heldLength += room;
      runs.push({ bytes: this.#drain(), frame: false });
      this.#overlong = true;
      rest = rest.subarray(room);
    }
    if (rest.length === 0) return;
    // Copied: the caller's buffer may be reused once push returns.
    this.#held.push(Buffer.from(rest));
    this.#heldLength += rest.length;
  }

  #take(): WireRun {
    const overlong = this.#overlong;
    const bytes = this.#drain();
    const encodedLength = bytes.length - 1;
    const decoded =
      !overlong && encodedLength > 0 && encodedLength <= MAX_LINK_ENCODED_LENGTH
        ? tryDecodeLinkFrame(bytes, 0, encodedLength)
        : undefined;
    return decoded === undefined || typeof decoded === 'string'
      ? { bytes, frame: false }
      : { bytes, frame: true, linkFrame: decoded };
  }

  #drain(): Buffer {
    const bytes = this.#held.length === 1 ? (this.#held[0] ?? Buffer.alloc(0)) : Buffer.concat(this.#held);
    this.#held = [];
    this.#heldLength = 0;
    this.#overlong = false;
    return bytes;
  }
}
