// A driver on a bench of `parkbench/testing` (testing/), as a phone app
// would be: an OAuth token for the bench's demo driver, a parking session
// with its smart key, and the key's access command sent to a box over MQTT
// with the bench's operator account, its response message awaited.
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import type { ResponseMessage } from '../../lib/mqtt-messages.js';
import type { Bench } from '../../testing/index.js';

/** What POST /api/car_driver/parking_sessions gave the driver. */
export interface DriverSession {
  readonly id: number;
  readonly state: string;
  readonly smartKeyId: number;
  /** The smart key's access command, base64. */
  readonly accessCommand: string;
}

/** The demo driver's access token (the password grant of the bench's client app). */
export async function driverToken(bench: Bench): Promise<string> {
  const response = await fetch(`${bench.api_url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'password',
      username: bench.driver.email,
      password: bench.driver.password,
      client_app_id: bench.client_app_id,
      client_secret: bench.client_secret,
    }),
  });
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** A parking session at the bench's demo parking. */
export async function startSession(bench: Bench, token: string): Promise<DriverSession> {
  const response = await fetch(`${bench.api_url}/api/car_driver/parking_sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ parking_session: { secured_parking_id: bench.parking_id } }),
  });
  if (response.status !== 201) throw new Error(`session: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as {
    parking_session: { id: number; state: string };
    smart_key: { id: number; access_command: string };
  };
  return {
    id: body.parking_session.id,
    state: body.parking_session.state,
    smartKeyId: body.smart_key.id,
    accessCommand: body.smart_key.access_command,
  };
}

/** The module id of the bench's box in `direction`. */
export function boxOf(bench: Bench, direction: 'entrance' | 'exit'): number {
  const box = bench.boxes.find((candidate) => candidate.direction === direction);
  if (box === undefined) throw new Error(`the bench has no ${direction} box`);
  return box.module_id;
}

/** Sends `command` to the box over the bench's broker and resolves with its response message. */
export async function sendToBox(bench: Bench, moduleId: number, command: string): Promise<ResponseMessage> {
  const client = await mqtt.connectAsync(bench.mqtt_url, { ...bench.mqtt_operator, reconnectPeriod: 0 });
  try {
    const requestId = randomUUID();
    const answered = new Promise<ResponseMessage>((resolve) => {
      client.on('message', (_topic, payload) => {
        const message = JSON.parse(payload.toString('utf8')) as ResponseMessage;
        if (message.context.request_id === requestId) resolve(message);
      });
    });
    await client.subscribeAsync(`parkbench/boxes/${moduleId}/response`, { qos: 1 });
    await client.publishAsync(
      `parkbench/boxes/${moduleId}/command`,
      JSON.stringify({ command, context: { request_id: requestId } }),
      { qos: 1 },
    );
    return await answered;
  } finally {
    await client.endAsync(true);
  }
}
