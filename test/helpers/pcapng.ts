// Reads the pcapng files parkbench writes (docs/capture.md), independently of
// lib/capture's writer: blocks by their lengths, interfaces by their
// if_name, packets through decodeRecord. A file cut in its last block reads
// up to it, and says so.
import { readFileSync } from 'node:fs';
import { decodeRecord, type DecodedRecord } from '../../lib/capture/record.js';

export interface CapturedPacket {
  readonly interfaceName: string;
  readonly linkType: number;
  readonly timestampMicros: bigint;
  /** null when the packet is not a parkbench record. */
  readonly record: DecodedRecord | null;
  readonly bytes: Buffer;
}

export interface CaptureContents {
  readonly application: string | undefined;
  readonly interfaces: readonly { name: string; description: string | undefined; linkType: number }[];
  readonly packets: readonly CapturedPacket[];
  /** The file ends inside a block. */
  readonly truncated: boolean;
}

function options(body: Buffer, from: number, to: number): Map<number, Buffer> {
  const found = new Map<number, Buffer>();
  let at = from;
  while (at + 4 <= to) {
    const code = body.readUInt16LE(at);
    const length = body.readUInt16LE(at + 2);
    if (code === 0) break;
    found.set(code, body.subarray(at + 4, at + 4 + length));
    at += 4 + ((length + 3) & ~3);
  }
  return found;
}

export function readCapture(pathOrBytes: string | Buffer): CaptureContents {
  const file = typeof pathOrBytes === 'string' ? readFileSync(pathOrBytes) : pathOrBytes;
  const interfaces: { name: string; description: string | undefined; linkType: number }[] = [];
  const packets: CapturedPacket[] = [];
  let application: string | undefined;
  let at = 0;
  let truncated = false;
  let sectionInterfaces: typeof interfaces = [];
  while (at < file.length) {
    if (at + 12 > file.length) {
      truncated = true;
      break;
    }
    const type = file.readUInt32LE(at);
    const total = file.readUInt32LE(at + 4);
    if (total < 12 || total % 4 !== 0) throw new Error(`block at ${at}: length ${total}`);
    if (at + total > file.length) {
      truncated = true;
      break;
    }
    if (file.readUInt32LE(at + total - 4) !== total) throw new Error(`block at ${at}: trailing length differs`);
    const body = file.subarray(at + 8, at + total - 4);
    if (type === 0x0a0d0d0a) {
      if (body.readUInt32LE(0) !== 0x1a2b3c4d) throw new Error(`section at ${at}: not little-endian`);
      application = options(body, 16, body.length).get(4)?.toString();
      sectionInterfaces = [];
    } else if (type === 1) {
      const found = options(body, 8, body.length);
      const entry = {
        name: found.get(2)?.toString() ?? '',
        description: found.get(3)?.toString(),
        linkType: body.readUInt16LE(0),
      };
      sectionInterfaces.push(entry);
      interfaces.push(entry);
    } else if (type === 6) {
      const id = body.readUInt32LE(0);
      const timestampMicros = (BigInt(body.readUInt32LE(4)) << 32n) | BigInt(body.readUInt32LE(8));
      const length = body.readUInt32LE(12);
      const bytes = Buffer.from(body.subarray(20, 20 + length));
      const link = sectionInterfaces[id];
      if (link === undefined) throw new Error(`packet at ${at}: interface ${id} not described`);
      packets.push({
        interfaceName: link.name,
        linkType: link.linkType,
        timestampMicros,
        record: decodeRecord(bytes),
        bytes,
      });
    }
    at += total;
  }
  return { application, interfaces, packets, truncated };
}
