// BLE link (docs/protocol.md, BLE link): frames travel in chunks; each chunk is a
// header byte (bit 7 set on the last chunk, bits 0..6 a counter from 0) ||
// up to MTU − 4 bytes, the MTU at least 23. A frame therefore takes at most
// 128 chunks (the counter never wraps, so counter 0 always starts a frame);
// the longest (225 bytes) takes 12 at MTU 23.
import { MAX_COMMAND_LENGTH } from './constants.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';

export const BleUuid = {
  service: '6b1d0001-7a3e-4c1b-9f5e-2d8a3c4b5e6f',
  /** Write with response: commands to the box. */
  command: '6b1d0002-7a3e-4c1b-9f5e-2d8a3c4b5e6f',
  /** Notify: responses and status reports from the box. */
  response: '6b1d0003-7a3e-4c1b-9f5e-2d8a3c4b5e6f',
} as const;

/** The local name a box advertises. */
export function bleLocalName(moduleId: number): string {
  return `PB-${moduleId}`;
}

const LAST_CHUNK = 0x80;
const COUNTER_MASK = 0x7f;
/** ATT overhead (3 bytes) plus the chunk header (1 byte). */
const CHUNK_OVERHEAD = 4;
/** docs/protocol.md, BLE link: the smallest ATT MTU of a BLE link (the core
 * specification's ATT_MTU minimum, and what every link has before an
 * exchange): 19 bytes of frame a chunk. */
export const MIN_BLE_MTU = 23;
export const MAX_CHUNKS = COUNTER_MASK + 1;

/** Splits `frame` into chunks for `mtu`; a short frame is one chunk. */
export function chunkFrame(frame: Uint8Array, mtu: number): Buffer[] {
  if (!Number.isInteger(mtu) || mtu < MIN_BLE_MTU)
    throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `MTU must be an integer >= ${MIN_BLE_MTU}, got ${mtu}`);
  const room = mtu - CHUNK_OVERHEAD;
  if (Math.ceil(frame.length / room) > MAX_CHUNKS) {
    throw new ProtocolError(
      ProtocolErrorCode.BAD_INPUT,
      `a ${frame.length}-byte frame needs more than ${MAX_CHUNKS} chunks at MTU ${mtu}`,
    );
  }
  const chunks: Buffer[] = [];
  let offset = 0;
  let counter = 0;
  do {
    const end = Math.min(frame.length, offset + room);
    const chunk = Buffer.allocUnsafe(1 + end - offset);
    chunk[0] = counter | (end === frame.length ? LAST_CHUNK : 0);
    chunk.set(frame.subarray(offset, end), 1);
    chunks.push(chunk);
    offset = end;
    counter++;
  } while (offset < frame.length);
  return chunks;
}

export interface BleReassemblerCounters {
  frames: number;
  /** A chunk out of order (a lost or repeated chunk): the partial frame is dropped. */
  counterErrors: number;
  /** A frame longer than the limit: dropped. */
  oversize: number;
  /** A chunk without even its header byte. */
  emptyChunks: number;
  /** Chunks dropped as they arrived, making no frame: empty, out of order,
   * after one out of order until a new frame starts, or past the limit. */
  droppedChunks: number;
}

/** Rebuilds frames from chunks. On a counter error it drops the partial frame
 * and ignores chunks until one with counter 0 starts a new frame. */
export class BleReassembler {
  readonly counters: BleReassemblerCounters = {
    frames: 0,
    counterErrors: 0,
    oversize: 0,
    emptyChunks: 0,
    droppedChunks: 0,
  };
  private parts: Buffer[] = [];
  private length = 0;
  private expected = 0;
  private waitingForStart = false;

  constructor(private readonly maxFrameLength: number = MAX_COMMAND_LENGTH) {
    if (!Number.isInteger(maxFrameLength) || maxFrameLength < 1)
      throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, 'maxFrameLength must be a positive integer');
  }

  /** Returns the frame this chunk completes, or null. */
  push(chunk: Uint8Array): Buffer | null {
    const header = chunk[0];
    if (header === undefined) {
      this.counters.emptyChunks++;
      this.counters.droppedChunks++;
      return null;
    }
    const counter = header & COUNTER_MASK;
    if (counter === 0) {
      if (this.length > 0) this.counters.counterErrors++; // a new frame cut the last one short
      this.clear();
    } else if (this.waitingForStart) {
      this.counters.droppedChunks++;
      return null;
    } else if (counter !== this.expected) {
      this.counters.counterErrors++;
      this.counters.droppedChunks++;
      this.clear();
      this.waitingForStart = true;
      return null;
    }
    const data = Buffer.from(chunk.subarray(1));
    if (this.length + data.length > this.maxFrameLength) {
      this.counters.oversize++;
      this.counters.droppedChunks++;
      this.clear();
      this.waitingForStart = true;
      return null;
    }
    this.parts.push(data);
    this.length += data.length;
    this.expected = counter + 1;
    if ((header & LAST_CHUNK) === 0) return null;
    const frame = this.parts.length === 1 ? data : Buffer.concat(this.parts, this.length);
    this.clear();
    this.counters.frames++;
    return frame;
  }

  private clear(): void {
    this.parts = [];
    this.length = 0;
    this.expected = 0;
    this.waitingForStart = false;
  }
}
