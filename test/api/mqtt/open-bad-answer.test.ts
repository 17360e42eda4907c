// POST /api/car_driver/smart_keys/:id/open when the box's answer cannot be
// trusted: a box on the embedded broker (a real MQTT
// client with the box's account) answers the command with bytes that are no
// response frame (502 bad_box_response), or with a real frame one bit off
// (200, verified false, and nothing read from the unverified bytes).
import test, { type ExecutionContext } from 'ava';
import mqtt from 'mqtt';
import { parseCommandMessage } from '../../../lib/mqtt-messages.js';
import { Topics } from '../../../lib/mqtt-topics.js';
import { hashMqttPassword } from '../../../api/auth/mqtt-password.js';
import { errorBody, loggedIn, testApp } from '../../helpers/api-app.js';
import { boxAnswer } from '../../helpers/box-logs.js';
import { createSession, seedParking, type SeededBox } from '../../helpers/parking.js';
import { all } from '../../helpers/sql.js';

const topics = new Topics();

/** A box that answers every command with `answer(command)` as its response. */
async function boxAnswering(
  t: ExecutionContext,
  url: string,
  box: SeededBox,
  answer: (command: Buffer) => Buffer,
): Promise<void> {
  const client = await mqtt.connectAsync(url, {
    username: `box-${box.moduleId}`,
    password: `pw-${box.moduleId}`,
    reconnectPeriod: 0,
  });
  t.teardown(() => client.endAsync(true));
  client.on('message', (_topic, payload) => {
    const { message, frame } = parseCommandMessage(payload);
    const response = {
      command: message.command,
      response: answer(frame).toString('base64'),
      received_at: new Date().toISOString(),
      via: 'mqtt',
      context: message.context ?? {},
    };
    // The test ends once the API has answered: an unacknowledged publish then is no failure.
    client.publish(topics.box(box.moduleId, 'response'), JSON.stringify(response), { qos: 1 }, () => undefined);
  });
  await client.subscribeAsync(topics.box(box.moduleId, 'command'), { qos: 1 });
}

async function openWith(t: ExecutionContext, answer: (box: SeededBox, command: Buffer) => Buffer) {
  const app = await testApp(t, {}, { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } });
  const parking = await seedParking(app, { isOnline: true });
  const box = parking.entrance;
  await app.ctx.boxes.setMqttPasswordHash(box.moduleId, hashMqttPassword(`pw-${box.moduleId}`));
  const token = (await loggedIn(app)).access_token;
  await boxAnswering(t, app.mqtt?.url ?? '', box, (command) => answer(box, command));
  const session = (await createSession(app, token, { parking_session: { secured_parking_id: parking.id } })).json<{
    smart_key: { id: number };
  }>();
  const response = await app.app.inject({
    method: 'POST',
    url: `/api/car_driver/smart_keys/${session.smart_key.id}/open`,
    headers: { authorization: `Bearer ${token}` },
    payload: { module_id: box.moduleId },
  });
  const logs = await all<{
    verified: number;
    response: string | null;
  }>(app.ctx.store, 'SELECT verified, response FROM box_logs');
  return { response, logs };
}

for (const [name, garbage] of [
  ['seven bytes', Buffer.from('garbage')],
  ['33 bytes', Buffer.alloc(33, 1)],
  ['32 bytes of version 2', Buffer.alloc(32, 2)],
] as const) {
  test(`a box answering ${name} (no response frame): 502 bad_box_response, the answer still stored as an unverified log`, async (t) => {
    const { response, logs } = await openWith(t, () => garbage);
    t.is(response.statusCode, 502, response.body);
    const body = errorBody(t, response);
    t.is(body.error, 'bad_box_response');
    t.deepEqual(logs, [{ verified: 0, response: garbage.toString('base64') }]);
  });
}

test('a box answering a real frame with one bit flipped: 200 with verified false and no status or remaining', async (t) => {
  const { response, logs } = await openWith(t, (box, command) => {
    const frame = boxAnswer(box, command, { remaining: 7 });
    frame[frame.length - 1] = (frame[frame.length - 1] ?? 0) ^ 1;
    return frame;
  });
  t.is(response.statusCode, 200, response.body);
  const body = response.json<Record<string, unknown>>();
  t.like(body, { verified: false, status: null, status_code: null, remaining: null });
  t.is(typeof body.response, 'string');
  t.is(logs.length, 1);
  t.is(logs[0]?.verified, 0);
  t.is(body.box_log_id, 1);
});

test('a box answering a real frame: 200 with its status and remaining, verified', async (t) => {
  const { response } = await openWith(t, (box, command) => boxAnswer(box, command, { remaining: 7 }));
  t.is(response.statusCode, 200, response.body);
  t.like(response.json(), { verified: true, status: 'OK', status_code: 0, remaining: 7 });
});
