// The parkbench capture record (docs/capture.md): a 12-byte header before
// each packet of a pcapng capture, saying which link the bytes crossed, in
// which direction, and what they are. Any tool reads it from that text alone;
// tools/wireshark/parkbench.lua dissects it.

/** pcapng link type of every parkbench interface: LINKTYPE_USER0. */
export const LINKTYPE_PARKBENCH = 147;

export const RECORD_VERSION = 1;
export const RECORD_HEADER_LENGTH = 12;

/** The link the bytes crossed. */
export const CaptureLink = { serial: 1, ble: 2, mqtt: 3 } as const;
export type CaptureLink = (typeof CaptureLink)[keyof typeof CaptureLink];
export type CaptureLinkName = keyof typeof CaptureLink;

/** Which way, seen from the box: a command goes to it, an answer comes from it. */
export const CaptureDirection = { toBox: 1, fromBox: 2 } as const;
export type CaptureDirection = (typeof CaptureDirection)[keyof typeof CaptureDirection];

/** What the packet's data is. */
export const RecordKind = {
  /** Serial: one run of bytes as on the wire, up to and with its 0x00 delimiter. */
  wire: 1,
  /** BLE: one chunk as written or notified (its header byte and data). */
  chunk: 2,
  /** MQTT: topic length (u16) || topic (UTF-8) || the message as published. */
  message: 3,
  /** A protocol frame (command or response), reassembled or taken out of a message. */
  frame: 4,
  /** The frame before it, opened by a tool that holds the box's keys (docs/capture.md, Opened records). */
  opened: 5,
} as const;
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind];

export const RecordFlag = {
  /** Wire bytes or a chunk that made no frame: bad COBS, bad CRC, too long, an
   * undefined link type, or a run the capture ended in the middle of. */
  notAFrame: 0x01,
  /** The module id field holds the box's module id (else it is 0). */
  moduleIdKnown: 0x02,
} as const;

export interface CaptureRecord {
  readonly link: CaptureLink;
  readonly direction: CaptureDirection;
  readonly kind: RecordKind;
  readonly moduleId?: number | undefined;
  readonly notAFrame?: boolean | undefined;
  readonly data: Uint8Array;
}

/** Writes the header of `record` at `offset` of `out` (12 bytes). */
export function writeRecordHeader(record: CaptureRecord, out: Uint8Array, offset: number): void {
  const moduleId = record.moduleId;
  const known = moduleId !== undefined && Number.isInteger(moduleId) && moduleId >= 0 && moduleId <= 0xffffffff;
  const flags = (record.notAFrame === true ? RecordFlag.notAFrame : 0) | (known ? RecordFlag.moduleIdKnown : 0);
  out[offset] = RECORD_VERSION;
  out[offset + 1] = RECORD_HEADER_LENGTH;
  out[offset + 2] = record.link;
  out[offset + 3] = record.direction;
  out[offset + 4] = record.kind;
  out[offset + 5] = flags;
  out[offset + 6] = 0;
  out[offset + 7] = 0;
  const id = known ? moduleId : 0;
  out[offset + 8] = id >>> 24;
  out[offset + 9] = (id >>> 16) & 0xff;
  out[offset + 10] = (id >>> 8) & 0xff;
  out[offset + 11] = id & 0xff;
}

/** The header and data of `record`, as one packet. */
export function encodeRecord(record: CaptureRecord): Buffer {
  const packet = Buffer.allocUnsafe(RECORD_HEADER_LENGTH + record.data.length);
  writeRecordHeader(record, packet, 0);
  packet.set(record.data, RECORD_HEADER_LENGTH);
  return packet;
}

export interface DecodedRecord extends CaptureRecord {
  readonly notAFrame: boolean;
}

/** Reads a packet written by `encodeRecord`; null when it is not one
 * (too short, another version, an unknown link, direction or kind). */
export function decodeRecord(packet: Uint8Array): DecodedRecord | null {
  if (packet.length < RECORD_HEADER_LENGTH || packet[0] !== RECORD_VERSION) return null;
  const headerLength = packet[1] ?? 0;
  if (headerLength < RECORD_HEADER_LENGTH || headerLength > packet.length) return null;
  const link = packet[2] ?? 0;
  const direction = packet[3] ?? 0;
  const kind = packet[4] ?? 0;
  const flags = packet[5] ?? 0;
  if (!isOneOf(CaptureLink, link) || !isOneOf(CaptureDirection, direction) || !isOneOf(RecordKind, kind)) return null;
  const view = Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength);
  const moduleId = (flags & RecordFlag.moduleIdKnown) !== 0 ? view.readUInt32BE(8) : undefined;
  return {
    link,
    direction,
    kind,
    moduleId,
    notAFrame: (flags & RecordFlag.notAFrame) !== 0,
    data: view.subarray(headerLength),
  };
}

function isOneOf<T extends Record<string, number>>(values: T, value: number): value is T[keyof T] {
  return Object.values(values).includes(value);
}

/** The data of an MQTT message record: topic length, topic, payload. */
export function mqttMessageData(topic: string, payload: Uint8Array): Buffer {
  const topicLength = Buffer.byteLength(topic);
  const data = Buffer.allocUnsafe(2 + topicLength + payload.length);
  data.writeUInt16BE(topicLength, 0);
  data.write(topic, 2);
  data.set(payload, 2 + topicLength);
  return data;
}
