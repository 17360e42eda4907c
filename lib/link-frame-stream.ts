// The serial link as a stream, kept thin: a
// Transform over firmware-protocol's pure LinkFrameDecoder. Bytes in, whole
// link frames out; bad frames are counted by the decoder, never passed on.
import { Transform, type TransformCallback } from 'node:stream';
import { LinkFrameDecoder, type LinkDecoderCounters, type LinkFrame } from '../firmware-protocol/index.js';

export class LinkFrameParser extends Transform {
  readonly #decoder = new LinkFrameDecoder();

  constructor() {
    super({ readableObjectMode: true });
  }

  /** Frames passed on, and frames dropped by reason. */
  get counters(): Readonly<LinkDecoderCounters> {
    return this.#decoder.counters;
  }

  /** Forgets a partial frame (the port was reopened). */
  reset(): void {
    this.#decoder.reset();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    for (const frame of this.#decoder.push(chunk)) this.push(frame);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    // A partial frame at the end of the stream has no delimiter: it is not a frame.
    this.#decoder.reset();
    callback();
  }
}

export type { LinkFrame };
