// Response messages made ahead of time by a real SimulatedBox: each one a
// verified answer (sealed under the box key) with a box_seq of its own, so
// a stream of them must become exactly that many verified box logs.
import { FakeClock } from '../lib/fake-clock.js';
import type { ResponseMessage } from '../lib/mqtt-messages.js';
import { FrameKind, parseResponse, sealCommand } from '../firmware-protocol/index.js';
import type { Provisioning } from '../lib/provisioning-file.js';
import { SimulatedBox } from './simulated-box.js';

export interface MadeResponse {
  readonly boxSeq: number;
  /** The response message's JSON, as a box would publish it. */
  readonly payload: string;
}

/** `count` answers of the box to ACCESS commands of test keys (key ids no
 * smart key of the service has: the logs move no session), from a box of
 * its own started for them. */
export async function makeVerifiedResponses(
  provisioning: Provisioning,
  count: number,
  nowMs = Date.now(),
): Promise<MadeResponse[]> {
  const box = await SimulatedBox.start({ clock: new FakeClock(nowMs), provisioning });
  try {
    return await verifiedResponsesOf(box, provisioning, count, nowMs);
  } finally {
    await box.stop();
  }
}

/** The same from a running box: its box_seq goes on from what it answered
 * before (answers made otherwise by the same box are never duplicates of these). */
export async function verifiedResponsesOf(
  box: SimulatedBox,
  provisioning: Provisioning,
  count: number,
  nowMs = Date.now(),
): Promise<MadeResponse[]> {
  const parkingKey = provisioning.parkingKey;
  if (parkingKey === null) throw new Error('makeVerifiedResponses seals ACCESS: it needs a box that holds K_park');
  const now = Math.floor(nowMs / 1000);
  const made: MadeResponse[] = [];
  for (let index = 0; index < count; index++) {
    // Keys spread over many ids, so no key runs out of tries.
    const command = sealCommand({
      kind: FrameKind.ACCESS,
      key: parkingKey,
      keyId: 0x7000_0000 + (index % 100),
      scope: provisioning.parkingId,
      body: {
        notBefore: now - 60,
        notAfter: now + 86_400,
        maxEntries: 255,
        maxExits: 255,
        moduleIds: [provisioning.moduleId],
      },
    });
    const response = await box.handleCommand(command);
    if (response === null) throw new Error('the simulated box dropped a command');
    const message: ResponseMessage = {
      command: command.toString('base64'),
      response: response.toString('base64'),
      received_at: new Date(nowMs).toISOString(),
      via: 'mqtt',
      context: {},
    };
    made.push({ boxSeq: parseResponse(response).boxSeq, payload: JSON.stringify(message) });
  }
  return made;
}
