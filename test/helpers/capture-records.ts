// The records of a capture file (read by pcapng.ts) in a few words, for
// tests that assert what was recorded and in which order.
import { CaptureDirection, RecordKind, type DecodedRecord } from '../../lib/capture/record.js';
import type { CapturedPacket } from './pcapng.js';

const directionNames = { [CaptureDirection.toBox]: 'to', [CaptureDirection.fromBox]: 'from' } as const;
const kindNames = {
  [RecordKind.wire]: 'wire',
  [RecordKind.chunk]: 'chunk',
  [RecordKind.message]: 'message',
  [RecordKind.frame]: 'frame',
  [RecordKind.opened]: 'opened',
} as const;

/** `to wire`, `from opened`, `to wire!` (marked not a frame): one word pair per record. */
export function recordWords(record: DecodedRecord): string {
  return `${directionNames[record.direction]} ${kindNames[record.kind]}${record.notAFrame ? '!' : ''}`;
}

/** The records of the packets on one interface, in order; a packet that is
 * no parkbench record throws. */
export function recordsOn(packets: readonly CapturedPacket[], interfaceName: string): DecodedRecord[] {
  return packets
    .filter((packet) => packet.interfaceName === interfaceName)
    .map((packet) => {
      if (packet.record === null) throw new Error(`a packet on ${interfaceName} is no parkbench record`);
      return packet.record;
    });
}

/** The data of an MQTT message record: its topic and payload. */
export function mqttMessageIn(data: Uint8Array): { topic: string; payload: string } {
  const bytes = Buffer.from(data);
  const topicLength = bytes.readUInt16BE(0);
  return {
    topic: bytes.subarray(2, 2 + topicLength).toString(),
    payload: bytes.subarray(2 + topicLength).toString(),
  };
}
