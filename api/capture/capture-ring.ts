// The API's capture ring: the records of every box's MQTT traffic
// (docs/capture.md) for the last `maxAgeMicros`, within `maxBytes` over all
// boxes, served one box at a time as a pcapng file.
//
// Records are copied, as they arrive, into slabs: large Buffers filled one
// after another, so the ring holds a few hundred objects whatever the traffic,
// and recording costs one copy. Each entry carries its box's previous entry's
// position, so a box's records are read newest first without a scan of the
// others'. Memory is given back a whole slab at a time, the oldest first:
// when the next slab would pass `maxBytes`, or when every record in the
// oldest slab is older than `maxAgeMicros`. Reading filters by age too, so a
// capture never holds a record older than the ring keeps.
import {
  enhancedPacketLength,
  interfaceDescriptionBlock,
  sectionHeaderBlock,
  writeEnhancedPacket,
} from '../../lib/capture/pcapng.js';
import {
  LINKTYPE_PARKBENCH,
  RECORD_HEADER_LENGTH,
  writeRecordHeader,
  type CaptureRecord,
} from '../../lib/capture/record.js';
import type { CaptureInterface, CaptureSink } from '../../lib/capture/sink.js';

/** What a record's header says (its data aside). */
export type RecordFields = Pick<CaptureRecord, 'link' | 'direction' | 'kind' | 'moduleId' | 'notAFrame'>;

/** An entry: its header, then the packet (the record's header and data). */
const Entry = {
  /** f64: microseconds since the Unix epoch, never less than the entry before. */
  micros: 0,
  /** f64: the position of the same box's entry before this one, -1 for none. */
  previous: 8,
  /** u32 */
  moduleId: 16,
  /** u16: index in the ring's interfaces. */
  interfaceId: 20,
  /** u32: the packet's length. */
  length: 22,
  packet: 26,
} as const;

/** The slab size: 1 MiB, or a sixteenth of a smaller bound (at least 4 KiB),
 * so a bound is kept to within one slab. */
function slabBytesFor(maxBytes: number): number {
  return Math.max(4096, Math.min(1 << 20, Math.floor(maxBytes / 16)));
}

interface Slab {
  /** The position of its first byte: positions grow over the ring's life. */
  readonly base: number;
  readonly bytes: Buffer;
  used: number;
  entries: number;
  lastMicros: number;
}

export interface CaptureRingOptions {
  /** Records older than this are not kept (microseconds, above 0). */
  readonly maxAgeMicros: number;
  /** The slabs held, over all boxes, stay within this many bytes. */
  readonly maxBytes: number;
  /** Now, in microseconds since the Unix epoch: the clock the records are stamped with. */
  readonly nowMicros: () => number;
}

export class CaptureRing implements CaptureSink {
  readonly #options: CaptureRingOptions;
  readonly #slabBytes: number;
  /** Oldest first. */
  readonly #slabs: Slab[] = [];
  readonly #interfaces: CaptureInterface[] = [];
  readonly #interfaceIds = new Map<string, number>();
  /** Each box's newest entry (its position). */
  readonly #newest = new Map<number, number>();
  /** Where the next slab starts. */
  #end = 0;
  #held = 0;
  #lastMicros = 0;
  #dropped = 0;

  constructor(options: CaptureRingOptions) {
    if (!(options.maxAgeMicros > 0)) throw new RangeError(`maxAgeMicros must be above 0, got ${options.maxAgeMicros}`);
    if (!(Number.isSafeInteger(options.maxBytes) && options.maxBytes > 0))
      throw new RangeError(`maxBytes must be a positive integer, got ${options.maxBytes}`);
    this.#options = options;
    this.#slabBytes = slabBytesFor(options.maxBytes);
  }

  /** Now, on the ring's clock (microseconds since the Unix epoch). */
  nowMicros(): number {
    return this.#options.nowMicros();
  }

  /** Makes `link` one of the capture's interfaces before any record of it,
   * so a capture with no packet still names it; returns its id for `append`. */
  describe(link: CaptureInterface): number {
    return this.#interfaceIdOf(link);
  }

  /** Bytes of the slabs held now (what `maxBytes` bounds). */
  get heldBytes(): number {
    return this.#held;
  }

  /** Records held now, every box's. */
  get records(): number {
    let count = 0;
    for (const slab of this.#slabs) count += slab.entries;
    return count;
  }

  /** Records not kept: no module id, or larger than the whole ring. */
  get dropped(): number {
    return this.#dropped;
  }

  record(link: CaptureInterface, timestampMicros: bigint, record: CaptureRecord): void {
    this.#append(this.#interfaceIdOf(link), Number(timestampMicros), record, undefined, record.data);
  }

  /**
   * Records one packet now, on the ring's clock, with no record object made
   * for it: what the API's MQTT side calls for every message (mqtt-capture.ts).
   * `topic`, when given, goes before `data` as a message record's topic
   * length (u16) and topic; a string `data` is written as UTF-8.
   */
  append(interfaceId: number, fields: RecordFields, data: Uint8Array | string, topic?: string): void {
    this.#append(interfaceId, this.nowMicros(), fields, topic, data);
  }

  #append(
    interfaceId: number,
    timestampMicros: number,
    fields: RecordFields,
    topic: string | undefined,
    data: Uint8Array | string,
  ): void {
    const { moduleId } = fields;
    const topicLength = topic === undefined ? 0 : Buffer.byteLength(topic);
    const dataLength = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    const packetLength = RECORD_HEADER_LENGTH + (topic === undefined ? 0 : 2 + topicLength) + dataLength;
    const entryLength = Entry.packet + packetLength;
    if (moduleId === undefined || entryLength > this.#options.maxBytes) {
      this.#dropped++;
      return;
    }
    const micros = Math.max(timestampMicros, this.#lastMicros);
    this.#lastMicros = micros;
    this.#forgetOlderThan(micros - this.#options.maxAgeMicros);
    const slab = this.#slabWithRoom(entryLength);
    const { bytes } = slab;
    const at = slab.used;
    bytes.writeDoubleLE(micros, at + Entry.micros);
    bytes.writeDoubleLE(this.#newest.get(moduleId) ?? -1, at + Entry.previous);
    bytes.writeUInt32LE(moduleId, at + Entry.moduleId);
    bytes.writeUInt16LE(interfaceId, at + Entry.interfaceId);
    bytes.writeUInt32LE(packetLength, at + Entry.length);
    // writeRecordHeader reads the header's fields, never the data.
    writeRecordHeader(fields as CaptureRecord, bytes, at + Entry.packet);
    let offset = at + Entry.packet + RECORD_HEADER_LENGTH;
    if (topic !== undefined) {
      bytes.writeUInt16BE(topicLength, offset);
      offset += 2 + bytes.write(topic, offset + 2);
    }
    if (typeof data === 'string') bytes.write(data, offset);
    else bytes.set(data, offset);
    slab.used = at + entryLength;
    slab.entries++;
    slab.lastMicros = micros;
    this.#newest.set(moduleId, slab.base + at);
  }

  /** A pcapng file of the box's records, oldest first, from `sinceMicros`
   * (absent: all the ring keeps): a section, every interface, and a packet a
   * record; no packet when none is kept. */
  capture(moduleId: number, application: string, sinceMicros?: number): Buffer {
    const now = this.nowMicros();
    this.#forgetOlderThan(now - this.#options.maxAgeMicros);
    const from = Math.max(now - this.#options.maxAgeMicros, sinceMicros ?? -Infinity);
    const found: { slab: Slab; at: number }[] = [];
    let position = this.#newest.get(moduleId) ?? -1;
    let index = this.#slabs.length - 1;
    while (position >= 0) {
      while (index >= 0 && (this.#slabs[index]?.base ?? 0) > position) index--;
      const slab = this.#slabs[index];
      if (slab === undefined) break;
      const at = position - slab.base;
      if (slab.bytes.readDoubleLE(at + Entry.micros) < from) break;
      found.push({ slab, at });
      position = slab.bytes.readDoubleLE(at + Entry.previous);
    }
    const head = [
      sectionHeaderBlock(application),
      ...this.#interfaces.map((link) => interfaceDescriptionBlock(LINKTYPE_PARKBENCH, link.name, link.description)),
    ];
    let length = 0;
    for (const block of head) length += block.length;
    for (const { slab, at } of found) length += enhancedPacketLength(slab.bytes.readUInt32LE(at + Entry.length));
    const out = Buffer.allocUnsafe(length);
    let offset = 0;
    for (const block of head) offset += block.copy(out, offset);
    for (let i = found.length - 1; i >= 0; i--) {
      const { slab, at } = found[i] as { slab: Slab; at: number };
      const { bytes } = slab;
      const packet = bytes.subarray(at + Entry.packet, at + Entry.packet + bytes.readUInt32LE(at + Entry.length));
      const micros = BigInt(bytes.readDoubleLE(at + Entry.micros));
      offset = writeEnhancedPacket(out, offset, bytes.readUInt16LE(at + Entry.interfaceId), micros, [packet]);
    }
    return out;
  }

  #interfaceIdOf(link: CaptureInterface): number {
    let id = this.#interfaceIds.get(link.name);
    if (id === undefined) {
      id = this.#interfaces.length;
      this.#interfaces.push(link);
      this.#interfaceIds.set(link.name, id);
    }
    return id;
  }

  /** The newest slab when the entry fits in it, else a new one, the oldest
   * given back first until the new one fits within `maxBytes`. */
  #slabWithRoom(entryLength: number): Slab {
    const newest = this.#slabs.at(-1);
    if (newest !== undefined && newest.used + entryLength <= newest.bytes.length) return newest;
    const size = Math.min(Math.max(this.#slabBytes, entryLength), this.#options.maxBytes);
    let dropped = false;
    while (this.#slabs.length > 0 && this.#held + size > this.#options.maxBytes) {
      this.#dropOldest();
      dropped = true;
    }
    if (dropped) this.#forgetBoxesBefore(this.#slabs[0]?.base ?? this.#end);
    // allocUnsafeSlow: a slab of its own, never a view into Node's shared pool.
    const slab: Slab = { base: this.#end, bytes: Buffer.allocUnsafeSlow(size), used: 0, entries: 0, lastMicros: 0 };
    this.#slabs.push(slab);
    this.#end += size;
    this.#held += size;
    return slab;
  }

  /** Gives back the oldest slabs whose every record is older than `micros`. */
  #forgetOlderThan(micros: number): void {
    let dropped = false;
    while ((this.#slabs[0]?.lastMicros ?? Infinity) < micros) {
      this.#dropOldest();
      dropped = true;
    }
    if (dropped) this.#forgetBoxesBefore(this.#slabs[0]?.base ?? this.#end);
  }

  #dropOldest(): void {
    const oldest = this.#slabs.shift();
    if (oldest !== undefined) this.#held -= oldest.bytes.length;
  }

  /** Forgets the boxes whose newest entry went with the slabs given back. */
  #forgetBoxesBefore(position: number): void {
    for (const [moduleId, newest] of this.#newest) if (newest < position) this.#newest.delete(moduleId);
  }
}
