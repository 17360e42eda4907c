// A capture written to a pcapng file as it happens, one whole block per
// write(2), so a file cut by a crash or a full disk ends at most with part
// of its last block and every block before it reads. Long captures rotate
// as dumpcap's ring buffer does (`-b filesize:N -b files:M`): numbered,
// timestamped files, the oldest removed past `maxFiles`. A write error
// stops the capture with one message; the link never sees it.
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { checkReplaceable } from '../atomic-file.js';
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
}

/** A capture file that cannot be opened: the message names the path and why. */
export class CaptureFileError extends Error {
  override readonly name = 'CaptureFileError';
}

export class CaptureFile implements CaptureSink {
  readonly #options: CaptureFileOptions;
  readonly #interfaces = new Map<string, { id: number; link: CaptureInterface }>();
  readonly #written: string[] = [];
  #fd: number | undefined;
  #bytes = 0;
  #packets = 0;
  readonly #header = Buffer.allocUnsafe(RECORD_HEADER_LENGTH);
  #block = Buffer.allocUnsafe(512);
  /** Files opened so far: the number in a rotated file's name. */
  #opened = 0;
  #stopped: Error | undefined;

  /** Opens the first file; throws CaptureFileError when it cannot be written. */
  constructor(options: CaptureFileOptions) {
    if (options.maxBytes !== undefined && !(Number.isSafeInteger(options.maxBytes) && options.maxBytes > 0))
      throw new RangeError(`maxBytes must be a positive integer, got ${options.maxBytes}`);
    if (options.maxFiles !== undefined && !(Number.isSafeInteger(options.maxFiles) && options.maxFiles > 0))
      throw new RangeError(`maxFiles must be a positive integer, got ${options.maxFiles}`);
    this.#options = options;
    this.#openNext();
  }

  /** The files written so far, oldest first (rotated ones removed). */
  get files(): readonly string[] {
    return this.#written;
  }

  /** Packets recorded, over every file. */
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
      if (maxBytes !== undefined && this.#packets > 0 && this.#bytes + needed > maxBytes) this.#rotate();
      if (known === undefined) {
        known = { id: this.#interfaces.size, link };
        this.#interfaces.set(link.name, known);
        this.#write(interfaceBlock ?? describe(link));
      }
      // One buffer for every block: each is written before the next is made.
      const length = enhancedPacketLength(packetLength);
      if (this.#block.length < length) this.#block = Buffer.allocUnsafe(Math.max(length, 2 * this.#block.length));
      writeRecordHeader(record, this.#header, 0);
      writeEnhancedPacket(this.#block, 0, known.id, timestampMicros, [this.#header, record.data]);
      this.#write(this.#block.subarray(0, length));
      this.#packets += 1;
    } catch (error) {
      this.#stop(error instanceof Error ? error : new Error(messageOf(error)));
    }
  }

  /** Closes the file; records after it are dropped. */
  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  #write(bytes: Buffer): void {
    if (this.#fd === undefined) return;
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(this.#fd, bytes, offset, bytes.length - offset);
    this.#bytes += bytes.length;
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
  }

  #rotate(): void {
    this.close();
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
    try {
      this.close();
    } catch {
      // The descriptor is gone either way.
      this.#fd = undefined;
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
