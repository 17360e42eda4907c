// A box's state message (docs/architecture.md, Messages) as the gateway knows it:
// from the last status report or response the box sent.
import { Barrier, barrierName, type ResponseFields } from '../firmware-protocol/index.js';
import type { StateMessage } from '../lib/mqtt-messages.js';

export function stateFromResponse(fields: ResponseFields, receivedAt: Date): StateMessage {
  return {
    // parseResponse refuses unknown barrier bytes, so the name is always there.
    barrier: (barrierName(fields.barrier) ?? 'FAULT').toLowerCase() as StateMessage['barrier'],
    battery_mv: fields.batteryMv,
    box_time: new Date(fields.boxTime * 1000).toISOString(),
    box_seq: fields.boxSeq,
    faults: fields.barrier === Barrier.FAULT ? ['barrier_fault'] : [],
    updated_at: receivedAt.toISOString(),
  };
}
