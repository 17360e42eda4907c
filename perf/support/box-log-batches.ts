// Bodies of POST /api/box_logs for the benchmark: batches of verified logs,
// each response sealed afresh under the box key with a new box_seq (a repeat
// would be a duplicate, stored once).
import { Barrier, Direction, Status, sealResponse } from '../../firmware-protocol/index.js';

export interface BoxLogFixture {
  userId: number;
  keyId: number;
  /** Base64 of the session key's access command. */
  command: string;
  parkingId: number;
  moduleId: number;
  /** 32 hex digits. */
  boxKey: string;
}

let boxSeq = 1;

export function boxLogBatch(fixture: BoxLogFixture, size: number): string {
  const command = Buffer.from(fixture.command, 'base64');
  const key = Buffer.from(fixture.boxKey, 'hex');
  const now = Math.floor(Date.now() / 1000);
  const logs = [];
  for (let i = 0; i < size; i += 1) {
    const response = sealResponse(
      {
        status: Status.OK,
        kind: 1,
        moduleId: fixture.moduleId,
        keyId: fixture.keyId,
        boxSeq: (boxSeq += 1),
        boxTime: now,
        batteryMv: 3700,
        barrier: Barrier.OPENING,
        direction: Direction.ENTRANCE,
        remaining: 200,
      },
      key,
      command,
    );
    logs.push({
      box_log: {
        fo_user_id: fixture.userId,
        smart_key_id: fixture.keyId,
        equipment_id: fixture.moduleId,
        secured_parking_id: fixture.parkingId,
        type: 'in',
        command: fixture.command,
        command_decrypted: 'ACCESS key 1',
        response: response.toString('base64'),
        response_decrypted: 'OK',
        offline: false,
        created_at: '2026-06-01 08:00:00',
        point_attributes: { latitude: 48.8566, longitude: 2.3522 },
      },
    });
  }
  return JSON.stringify({ box_logs: logs });
}
