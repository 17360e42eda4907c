// A conformance run's captures read back (readCapture), for the capture
// tests: the records of one file in order, which frames each direction
// carried, and whether an opened record follows each frame as
// docs/capture.md says.
import { readFileSync } from 'node:fs';
import { LinkType, tryDecodeLinkFrame } from '../../firmware-protocol/index.js';
import { CaptureDirection, RecordKind, type DecodedRecord } from '../../lib/capture/record.js';
import { readCapture, type CaptureContents } from './pcapng.js';

export interface CapturedRecord extends DecodedRecord {
  readonly interfaceName: string;
}

/** The parkbench records of a capture file, in order (every packet must be one). */
export function capturedRecords(path: string): { contents: CaptureContents; records: CapturedRecord[] } {
  const contents = readCapture(path);
  const records = contents.packets.map((packet) => {
    if (packet.record === null) throw new Error(`${path}: a packet that is no parkbench record`);
    return { ...packet.record, interfaceName: packet.interfaceName };
  });
  return { contents, records };
}

/** The protocol frame a record carries: a frame record's data, or the
 * payload of a serial run's command, response or status report link frame. */
export function frameOf(record: DecodedRecord): Buffer | undefined {
  const data = Buffer.from(record.data);
  if (record.kind === RecordKind.frame) return data;
  if (record.kind !== RecordKind.wire || record.notAFrame || data.at(-1) !== 0) return undefined;
  const decoded = tryDecodeLinkFrame(data, 0, data.length - 1);
  if (typeof decoded === 'string') return undefined;
  const carries =
    record.direction === CaptureDirection.toBox
      ? decoded.type === LinkType.COMMAND
      : decoded.type === LinkType.RESPONSE || decoded.type === LinkType.STATUS_REPORT;
  return carries ? decoded.payload : undefined;
}

/** Each frame of the file, with the opened record that follows it on its
 * interface (undefined when the next record there is something else). */
export function framesAndOpened(
  records: readonly CapturedRecord[],
): { frame: Buffer; record: CapturedRecord; opened: CapturedRecord | undefined }[] {
  return records.flatMap((record, index) => {
    const frame = frameOf(record);
    if (frame === undefined) return [];
    const next = records.slice(index + 1).find((later) => later.interfaceName === record.interfaceName);
    return [{ frame, record, opened: next?.kind === RecordKind.opened ? next : undefined }];
  });
}

/** Whether any of `secrets` appears in the file's bytes. */
export function holdsAny(path: string, secrets: readonly Uint8Array[]): boolean {
  const bytes = readFileSync(path);
  return secrets.some((secret) => bytes.includes(Buffer.from(secret)));
}
