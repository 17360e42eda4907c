// A capture written to a pcapng file as it happens: blocks are gathered and
// written together, at most `flushAfterMs` after the first of them was
// recorded (sooner past 64 KiB), and close() writes what is left; a busy
// link's command, answer and status reports cost one write(2), not one each.
// A process that dies without close() loses at most those last milliseconds.
// The file only ever grows by whole blocks, so a file cut by a crash or a
// full disk ends at most with part of its last block and every block before
// it reads. Long captures rotate
// as dumpcap's ring buffer does (`-b filesize:N -b files:M`): numbered,
// timestamped files, the oldest removed past `maxFiles`. A write error
// stops the capture with one message; the link never sees it.
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { checkReplaceable } from '../atomic-file.js';
import { systemClock, type Clock, type TimerHandle } from '../clock.js';
import { messageOf } from '../message-of.js';
import { enhancedPacketLength, interfaceDescriptionBlock, sectionHeaderBlock, writeEnhancedPacket } from './pcapng.js';
import { LINKTYPE_PARKBENCH, RECORD_HEADER_LENGTH, writeRecordHeader, type CaptureRecord } from './record.js';
import type { CaptureInterface, CaptureSink } from './sink.js';

export interface CaptureFileOptions {
  readonly path: string;
  /** Start a new file before one would pass this many bytes (default: one file, no limit). */
  readonly maxBytes?: number;
  /** With maxBytes: keep only the newest this many files (default: all). */
  readonly maxFiles?: number;
  /** shb_userappl: the tool and its version. */
  readonly application: string;
  /** Called once, when a write fails and the capture stops. */
  readonly onStop?: (error: Error) => void;
  /** For the names of rotated files (default: now). */
  readonly now?: () => Date;
  /** Longest time a recorded block waits to be written, ms (default 50). */
  readonly flushAfterMs?: number;
  /** The clock of that wait (default: real time). */
  readonly clock?: Clock;
}

/** A capture file that cannot be opened: the message names the path and why. */
export class CaptureFileError extends Error {
  override readonly name = 'CaptureFileError';
}

/** Pending bytes that are written at once rather than when the wait is over. */
const FLUSH_AT_BYTES = 64 * 1024;
const DEFAULT_FLUSH_AFTER_MS = 50;
const INITIAL_PENDING_BYTES = 8 * 1024;

export class CaptureFile implements CaptureSink {
  readonly #options: CaptureFileOptions;
  readonly #clock: Clock;
  readonly #interfaces = new Map<string, { id: number; link: CaptureInterface }>();
  readonly #written: string[] = [];
  #fd: number | undefined;
  /** Bytes of the current file, those still pending included. */
  #bytes = 0;
  #packets = 0;
  readonly #header = Buffer.allocUnsafe(RECORD_HEADER_LENGTH);
  /** Blocks recorded and not yet written, `#pendingLength` bytes of it in use. */
  #pending = Buffer.allocUnsafe(INITIAL_PENDING_BYTES);
  #pendingLength = 0;
  /** Where each pending packet block ends in `#pending`, to count the packets a cut write kept. */
  readonly #packetEnds: number[] = [];
  #flushTimer: TimerHandle | undefined;
  /** Files opened so far: the number in a rotated file's name. */
  #opened = 0;
  #stopped: Error | undefined;

  /** Opens the first file; throws CaptureFileError when it cannot be written. */
  constructor(options: CaptureFileOptions) {
    if (options.maxBytes !== undefined && !(Number.isSafeInteger(options.maxBytes) && options.maxBytes > 0))
      throw new RangeError(`maxBytes must be a positive integer, got ${options.maxBytes}`);
    if (options.maxFiles !== undefined && !(Number.isSafeInteger(options.maxFiles) && options.maxFiles > 0))
      throw new RangeError(`maxFiles must be a positive integer, got ${options.maxFiles}`);
    const { flushAfterMs } = options;
    if (flushAfterMs !== undefined && !(Number.isFinite(flushAfterMs) && flushAfterMs >= 0))
      throw new RangeError(`flushAfterMs must be a number of ms, 0 or more, got ${flushAfterMs}`);
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#openNext();
  }

  /** The files written so far, oldest first (rotated ones removed). */
  get files(): readonly string[] {
    return this.#written;
  }

  /** Packets recorded over every file, those still waiting to be written included. */
  get packets(): number {
    return this.#packets;
  }

  /** Why the capture stopped, if a write failed. */
  get stopped(): Error | undefined {
    return this.#stopped;
  }

  record(link: CaptureInterface, timestampMicros: bigint, record: CaptureRecord): void {
    if (this.#fd === undefined) return;
    try {
      const packetLength = RECORD_HEADER_LENGTH + record.data.length;
      let known = this.#interfaces.get(link.name);
      const interfaceBlock = known === undefined ? describe(link) : undefined;
      const needed = enhancedPacketLength(packetLength) + (interfaceBlock?.length ?? 0);
      const { maxBytes } = this.#options;
      if (maxBytes !== undefined && this.#packets > 0 && this.#bytes + needed > maxBytes) {
        this.#rotate();
        if (this.#stopped !== undefined) return;
      }
      if (known === undefined) {
        known = { id: this.#interfaces.size, link };
        this.#interfaces.set(link.name, known);
        this.#write(interfaceBlock ?? describe(link));
      }
      const length = enhancedPacketLength(packetLength);
      const at = this.#reserve(length);
      writeRecordHeader(record, this.#header, 0);
      writeEnhancedPacket(this.#pending, at, known.id, timestampMicros, [this.#header, record.data]);
      this.#packetEnds.push(this.#pendingLength);
      this.#packets += 1;
      if (this.#pendingLength >= FLUSH_AT_BYTES) this.#flush();
    } catch (error) {
      this.#stop(error instanceof Error ? error : new Error(messageOf(error)));
    }
  }

  /** Writes what is pending and closes the file; records after it are dropped. */
  close(): void {
    if (this.#fd === undefined) return;
    try {
      this.#flush();
    } catch (error) {
      this.#stop(error instanceof Error ? error : new Error(messageOf(error)));
      return;
    }
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  /** Queues bytes that are not a packet (a section or interface block). */
  #write(bytes: Buffer): void {
    bytes.copy(this.#pending, this.#reserve(bytes.length));
  }

  /** Makes room for `length` more pending bytes; returns where they go. */
  #reserve(length: number): number {
    const at = this.#pendingLength;
    if (at + length > this.#pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(at + length, 2 * this.#pending.length));
      this.#pending.copy(grown, 0, 0, at);
      this.#pending = grown;
    }
    this.#pendingLength = at + length;
    this.#bytes += length;
    this.#flushTimer ??= this.#clock.setTimeout(this.#flushLater, this.#options.flushAfterMs ?? DEFAULT_FLUSH_AFTER_MS);
    return at;
  }

  readonly #flushLater = (): void => {
    this.#flushTimer = undefined;
    try {
      this.#flush();
    } catch (error) {
      this.#stop(error instanceof Error ? error : new Error(messageOf(error)));
    }
  };

  /** Writes every pending byte; on a failed write, only the packets wholly
   * written are counted, and the error is thrown. */
  #flush(): void {
    if (this.#flushTimer !== undefined) {
      this.#clock.clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
    }
    const fd = this.#fd;
    const length = this.#pendingLength;
    if (fd === undefined || length === 0) return;
    let offset = 0;
    try {
      while (offset < length) offset += writeSync(fd, this.#pending, offset, length - offset);
    } catch (error) {
      this.#packets -= this.#packetEnds.filter((end) => end > offset).length;
      throw error;
    } finally {
      this.#pendingLength = 0;
      this.#packetEnds.length = 0;
    }
  }

  #openNext(): void {
    const path = this.#nextPath();
    try {
      checkReplaceable(path);
      this.#fd = openSync(path, 'w', 0o644);
    } catch (error) {
      throw new CaptureFileError(`capture file ${path}: ${messageOf(error)}`);
    }
    this.#opened += 1;
    this.#written.push(path);
    this.#bytes = 0;
    this.#write(sectionHeaderBlock(this.#options.application));
    // A rotated file stands alone: every interface again, with its id.
    for (const { link } of this.#interfaces.values()) this.#write(describe(link));
    // A new file reads as a capture from the start, before any packet.
    this.#flush();
  }

  #rotate(): void {
    this.close();
    if (this.#stopped !== undefined) return;
    this.#openNext();
    const { maxFiles } = this.#options;
    while (maxFiles !== undefined && this.#written.length > maxFiles) {
      const oldest = this.#written.shift();
      if (oldest !== undefined) removeIfThere(oldest);
    }
  }

  /** The path itself without rotation; else dumpcap's names:
   * `<stem>_<NNNNN>_<YYYYMMDDhhmmss><ext>`. */
  #nextPath(): string {
    const { path, maxBytes } = this.#options;
    if (maxBytes === undefined) return path;
    const extension = extname(path) || '.pcapng';
    const stem = basename(path, extname(path));
    const number = String(this.#opened + 1).padStart(5, '0');
    const stamp = (this.#options.now?.() ?? new Date()).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    return join(dirname(path), `${stem}_${number}_${stamp}${extension}`);
  }

  #stop(error: Error): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = error;
    if (this.#flushTimer !== undefined) this.#clock.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#pendingLength = 0;
    this.#packetEnds.length = 0;
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      if (fd !== undefined) closeSync(fd);
    } catch {
      // The descriptor is gone either way.
    }
    this.#options.onStop?.(error);
  }
}

/** Removes an old file of the ring; one already gone (someone moved or
 * deleted it) is what removing it was for, not a reason to stop. */
function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function describe(link: CaptureInterface): Buffer {
  return interfaceDescriptionBlock(LINKTYPE_PARKBENCH, link.name, link.description);
}
