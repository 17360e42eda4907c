// What a driver's phone does, in plain fetch and MQTT, shared by the four
// example tests: register with the bench's client app and log in, start a
// parking session, and send its smart key's access command to a box (over
// the bench's MQTT broker, where its simulated boxes listen; a phone would
// use BLE), waiting for the box's answer.
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';

/** Registers a new driver with the bench's client app; resolves with an access token. */
export async function registerDriver(bench) {
  const client = { client_app_id: bench.client_app_id, client_secret: bench.client_secret };
  const email = `driver.${randomUUID()}@example.com`;
  const password = 'a password of the test';
  await call(bench, 'POST', '/api/car_driver', 201, {
    api_car_driver_fo_user: {
      email,
      password,
      password_confirmation: password,
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+33100000000',
    },
    ...client,
  });
  const token = await call(bench, 'POST', '/api/oauth/token', 200, {
    grant_type: 'password',
    username: email,
    password,
    ...client,
  });
  return token.access_token;
}

/** Starts a parking session at the bench's parking: `{ parking_session, smart_key, pay_url, … }`. */
export function startSession(bench, accessToken) {
  return call(
    bench,
    'POST',
    '/api/car_driver/parking_sessions',
    201,
    { parking_session: { secured_parking_id: bench.parking_id } },
    accessToken,
  );
}

/** Sends an access command to a box through the bench's MQTT broker and
 * resolves with the box's response message (`{ response, … }`). */
export async function sendToBox(bench, moduleId, accessCommand) {
  const broker = await mqtt.connectAsync(bench.mqtt_url, bench.mqtt_operator);
  try {
    const requestId = randomUUID();
    const answer = new Promise((resolve) => {
      broker.on('message', (_topic, payload) => {
        const message = JSON.parse(payload.toString());
        if (message.context?.request_id === requestId) resolve(message);
      });
    });
    await broker.subscribeAsync(`parkbench/boxes/${moduleId}/response`, { qos: 1 });
    await broker.publishAsync(
      `parkbench/boxes/${moduleId}/command`,
      JSON.stringify({ command: accessCommand, context: { request_id: requestId } }),
      { qos: 1 },
    );
    return await answer;
  } finally {
    await broker.endAsync();
  }
}

/** The module id of the bench's entrance box. */
export function entranceOf(bench) {
  return bench.boxes.find((box) => box.direction === 'entrance').module_id;
}

async function call(bench, method, path, expected, body, accessToken) {
  const response = await fetch(`${bench.api_url}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
    },
    body: JSON.stringify(body),
  });
  if (response.status !== expected)
    throw new Error(`${method} ${path}: expected ${expected}, got ${response.status} ${await response.text()}`);
  return response.json();
}
