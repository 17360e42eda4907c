import test from 'ava';
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { FakeClock } from '../../lib/fake-clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { FrameKind, MAX_COMMAND_LENGTH, Status } from '../../firmware-protocol/constants.js';
import { parseResponse, verifyResponse } from '../../firmware-protocol/response.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxMqttLink } from '../../simulator/links/mqtt-link.js';
import type {
  Provisioning as AnyProvisioning,
  SealedProvisioning as Provisioning,
} from '../../lib/provisioning-file.js';
import { sealedAccess, testProvisioning } from '../helpers/box-provisioning.js';
import { newIssuer, signedAccess, signedProvisioning, thirtyTwoModules } from '../helpers/signed-box.js';
import { brokerForTest, startBroker } from '../helpers/broker.js';
import { waitFor } from '../helpers/wait.js';
import type { ExecutionContext } from 'ava';

const topics = new Topics();
const START = Date.UTC(2026, 5, 1, 8, 0, 0);

function provisioning(moduleId = 9101): Provisioning {
  return testProvisioning({ moduleId });
}

function accessCommand(box: Provisioning, keyId = 42): Buffer {
  return sealedAccess(box, { keyId, nowSeconds: START / 1000 });
}

/** An operator: a plain MQTT client that records what it receives. */
async function operator(
  t: ExecutionContext,
  url: string,
): Promise<{ client: MqttClient; received: { topic: string; payload: string; retain: boolean }[] }> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 100 });
  t.teardown(() => client.endAsync(true));
  const received: { topic: string; payload: string; retain: boolean }[] = [];
  client.on('message', (topic, payload, packet) =>
    received.push({ topic, payload: payload.toString(), retain: packet.retain }),
  );
  await client.subscribeAsync(`${topics.prefix}/boxes/#`, { qos: 1 });
  return { client, received };
}

async function startLinkedBox<P extends AnyProvisioning = Provisioning>(
  t: ExecutionContext,
  url: string,
  box_: P = provisioning() as P,
) {
  const clock = new FakeClock(START);
  const box = await SimulatedBox.start({ clock, provisioning: box_ });
  const link = new BoxMqttLink(box, {
    url,
    username: 'box',
    password: 'pw',
    clock,
    backoff: { initialMs: 100, maxMs: 100, factor: 1, jitter: 0 },
  });
  t.teardown(async () => {
    await link.stop();
    await box.stop();
  });
  await link.start();
  return { clock, box, link, box_ };
}

test('a box comes online, publishes its state, and answers a command with context passed through', async (t) => {
  const broker = await brokerForTest(t);
  const { client, received } = await operator(t, broker.url);
  const { box_ } = await startLinkedBox(t, broker.url);
  await waitFor(
    () => received.some((m) => m.topic.endsWith('/availability') && m.payload === 'online'),
    'availability online',
  );
  await waitFor(() => received.some((m) => m.topic === topics.box(9101, 'state')), 'the state message');
  const command = accessCommand(box_);
  await client.publishAsync(
    topics.box(9101, 'command'),
    JSON.stringify({ command: command.toString('base64'), context: { request_id: 'r-1', smart_key_id: 42 } }),
    { qos: 1 },
  );
  await waitFor(() => received.some((m) => m.topic === topics.box(9101, 'response')), 'the response');
  const message = JSON.parse(received.find((m) => m.topic === topics.box(9101, 'response'))?.payload ?? '{}') as Record<
    string,
    unknown
  >;
  t.is(message.command, command.toString('base64'));
  t.is(message.via, 'mqtt');
  t.deepEqual(message.context, { request_id: 'r-1', smart_key_id: 42 });
  t.regex(String(message.received_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const response = Buffer.from(String(message.response), 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.is(parseResponse(response).status, Status.OK);
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9101, 'state') && m.payload.includes('"barrier":"opening"')),
    'the barrier opening in the state',
  );
});

test('messages that are no command are counted and dropped; garbage bytes get MALFORMED; then a valid command works', async (t) => {
  const broker = await brokerForTest(t);
  const { client, received } = await operator(t, broker.url);
  const { link, box_ } = await startLinkedBox(t, broker.url);
  const commandTopic = topics.box(9101, 'command');
  await client.publishAsync(commandTopic, 'not json', { qos: 1 });
  await client.publishAsync(commandTopic, JSON.stringify({ context: {} }), { qos: 1 });
  await client.publishAsync(commandTopic, JSON.stringify({ command: 'not base64!' }), { qos: 1 });
  await client.publishAsync(commandTopic, JSON.stringify({ command: randomBytes(40).toString('base64') }), { qos: 1 });
  await client.publishAsync(commandTopic, JSON.stringify({ command: accessCommand(box_).toString('base64') }), {
    qos: 1,
  });
  const responses = () => received.filter((m) => m.topic === topics.box(9101, 'response'));
  await waitFor(() => responses().length === 2, 'two responses');
  const statuses = responses().map(
    (m) => parseResponse(Buffer.from((JSON.parse(m.payload) as { response: string }).response, 'base64')).status,
  );
  t.not(statuses[0], Status.OK);
  t.is(statuses[1], Status.OK);
  t.is(link.counters.badMessages, 3);
});

test('sim/set changes the box and its published state; a bad sim/set is counted', async (t) => {
  const broker = await brokerForTest(t);
  const { client, received } = await operator(t, broker.url);
  const { box, link } = await startLinkedBox(t, broker.url);
  await client.publishAsync(topics.box(9101, 'sim/set'), JSON.stringify({ jam: true, battery_mv: 3_100 }), { qos: 1 });
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9101, 'state') && m.payload.includes('"faults":["jam"]')),
    'the jam in the state',
  );
  t.is(box.battery.millivolts, 3_100);
  await client.publishAsync(topics.box(9101, 'sim/set'), JSON.stringify({ jam: 'yes' }), { qos: 1 });
  await waitFor(() => link.counters.badSettings === 1, 'the bad sim/set counted');
});

test('a response answered while the broker is away is published when it is back', async (t) => {
  const first = await startBroker();
  const port = first.port;
  t.teardown(() => first.close());
  const { clock, box, link, box_ } = await startLinkedBox(t, first.url);
  const sender = await mqtt.connectAsync(first.url);
  box.apply({ faults: { delayMs: 1_000 } });
  await sender.publishAsync(
    topics.box(9101, 'command'),
    JSON.stringify({ command: accessCommand(box_).toString('base64') }),
    { qos: 1 },
  );
  await sender.endAsync(true);
  await waitFor(() => box.counters.commandsReceived === 1, 'the command at the box');
  await first.close();
  await waitFor(() => !link.connected, 'the link to notice the broker is gone');
  await clock.advanceAsync(1_000);
  await waitFor(() => link.queued === 1, 'the response queued');
  const second = await startBroker({}, port);
  t.teardown(() => second.close());
  const { received } = await operator(t, second.url);
  await clock.advanceAsync(100);
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9101, 'response')),
    'the queued response after reconnecting',
    10_000,
  );
  t.is(link.queued, 0);
  t.true(link.connects >= 2);
});

test('going offline shows the last will, and the box comes back after the given time', async (t) => {
  const broker = await brokerForTest(t);
  const { received } = await operator(t, broker.url);
  const { clock, link } = await startLinkedBox(t, broker.url);
  await waitFor(() => received.some((m) => m.topic.endsWith('/availability') && m.payload === 'online'), 'online');
  link.goOffline(30_000);
  await waitFor(
    () => received.some((m) => m.topic.endsWith('/availability') && m.payload === 'offline'),
    'the last will',
  );
  await clock.advanceAsync(29_000);
  t.false(link.connected);
  const onlineBefore = received.filter((m) => m.payload === 'online').length;
  await clock.advanceAsync(1_000);
  await waitFor(() => received.filter((m) => m.payload === 'online').length > onlineBefore, 'online again');
  t.true(link.connected);
});

test('docs/protocol.md, Sizes: the largest command, a 225-byte ACCESS_SIGNED of 32 modules, reaches a signed box over MQTT and is answered OK', async (t) => {
  const broker = await brokerForTest(t);
  const { client, received } = await operator(t, broker.url);
  const issuer = newIssuer();
  const { box_ } = await startLinkedBox(t, broker.url, signedProvisioning(issuer, { moduleId: 9111 }));
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9111, 'availability') && m.payload === 'online'),
    'availability online',
  );
  const command = signedAccess(box_, issuer, { nowSeconds: START / 1000, moduleIds: thirtyTwoModules(9111) });
  t.is(command.length, MAX_COMMAND_LENGTH);
  await client.publishAsync(topics.box(9111, 'command'), JSON.stringify({ command: command.toString('base64') }), {
    qos: 1,
  });
  await waitFor(() => received.some((m) => m.topic === topics.box(9111, 'response')), 'the response');
  const message = JSON.parse(received.find((m) => m.topic === topics.box(9111, 'response'))?.payload ?? '{}') as Record<
    string,
    unknown
  >;
  t.is(message.command, command.toString('base64'));
  const response = Buffer.from(String(message.response), 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.like(parseResponse(response), { status: Status.OK, kind: FrameKind.ACCESS_SIGNED, keyId: 42 });
});
