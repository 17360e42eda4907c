// pcapng blocks (IETF draft-ietf-opsawg-pcapng): the Section Header, an
// Interface Description per link, an Enhanced Packet per record. Written
// little-endian (the byte-order magic tells readers); timestamps in
// microseconds, pcapng's default resolution, stated with if_tsresol anyway.

const BlockType = { section: 0x0a0d0d0a, interface: 0x00000001, enhancedPacket: 0x00000006 } as const;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
const Option = { end: 0, shbUserAppl: 4, ifName: 2, ifDescription: 3, ifTsresol: 9 } as const;
/** Fixed part of an Enhanced Packet Block: type, length, interface, timestamp (2), lengths (2), trailing length. */
const EPB_FIXED_LENGTH = 32;

function padded(length: number): number {
  return (length + 3) & ~3;
}

function option(code: number, value: Uint8Array): Buffer {
  const out = Buffer.alloc(4 + padded(value.length));
  out.writeUInt16LE(code, 0);
  out.writeUInt16LE(value.length, 2);
  out.set(value, 4);
  return out;
}

function optionsOf(entries: readonly Buffer[]): Buffer {
  return entries.length === 0 ? Buffer.alloc(0) : Buffer.concat([...entries, Buffer.alloc(4)]);
}

function block(type: number, body: Buffer): Buffer {
  const total = 12 + body.length;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32LE(type, 0);
  out.writeUInt32LE(total, 4);
  body.copy(out, 8);
  out.writeUInt32LE(total, total - 4);
  return out;
}

/** A Section Header Block of unknown section length; `application` goes in shb_userappl. */
export function sectionHeaderBlock(application: string): Buffer {
  const fixed = Buffer.alloc(16);
  fixed.writeUInt32LE(BYTE_ORDER_MAGIC, 0);
  fixed.writeUInt16LE(1, 4);
  fixed.writeUInt16LE(0, 6);
  fixed.writeBigInt64LE(-1n, 8);
  return block(
    BlockType.section,
    Buffer.concat([fixed, optionsOf([option(Option.shbUserAppl, Buffer.from(application))])]),
  );
}

/** An Interface Description Block: `linkType`, no snap length, microseconds. */
export function interfaceDescriptionBlock(linkType: number, name: string, description?: string): Buffer {
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16LE(linkType, 0);
  fixed.writeUInt32LE(0, 4);
  const options = [option(Option.ifName, Buffer.from(name)), option(Option.ifTsresol, Buffer.from([6]))];
  if (description !== undefined) options.push(option(Option.ifDescription, Buffer.from(description)));
  return block(BlockType.interface, Buffer.concat([fixed, optionsOf(options)]));
}

/** The length of the Enhanced Packet Block of a packet of `length` bytes. */
export function enhancedPacketLength(length: number): number {
  return EPB_FIXED_LENGTH + padded(length);
}

/** Writes an Enhanced Packet Block at `offset` of `out` (which has
 * `enhancedPacketLength(parts' length)` bytes from there); returns its end.
 * The packet is the concatenation of `parts`, so a header and its data need
 * no copy between them. */
export function writeEnhancedPacket(
  out: Buffer,
  offset: number,
  interfaceId: number,
  timestampMicros: bigint,
  parts: readonly Uint8Array[],
): number {
  let length = 0;
  for (const part of parts) length += part.length;
  const total = enhancedPacketLength(length);
  out.writeUInt32LE(BlockType.enhancedPacket, offset);
  out.writeUInt32LE(total, offset + 4);
  out.writeUInt32LE(interfaceId, offset + 8);
  out.writeUInt32LE(Number((timestampMicros >> 32n) & 0xffffffffn), offset + 12);
  out.writeUInt32LE(Number(timestampMicros & 0xffffffffn), offset + 16);
  out.writeUInt32LE(length, offset + 20);
  out.writeUInt32LE(length, offset + 24);
  let at = offset + 28;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  out.fill(0, at, offset + total - 4);
  out.writeUInt32LE(total, offset + total - 4);
  return offset + total;
}

/** An Enhanced Packet Block of one packet. */
export function enhancedPacketBlock(interfaceId: number, timestampMicros: bigint, packet: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(enhancedPacketLength(packet.length));
  writeEnhancedPacket(out, 0, interfaceId, timestampMicros, [packet]);
  return out;
}
