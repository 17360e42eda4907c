import { createConnection } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import type { Client } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { Topics } from '../../../lib/mqtt-topics.js';
import { MqttAccountRepository } from '../../../api/mqtt/accounts.js';
import type { MqttAccount } from '../../../api/mqtt/acl.js';
import { startEmbeddedBroker, type EmbeddedBroker, type ResponseIngester } from '../../../api/mqtt/broker.js';
import { brokerFixture, type BrokerFixture } from '../../helpers/mqtt-fixtures.js';
import { waitFor } from '../../helpers/wait.js';
import { sqliteStore } from '../../../api/db/store.js';

const topics = new Topics();

async function broker(t: ExecutionContext, fixture: BrokerFixture, ingest?: ResponseIngester): Promise<EmbeddedBroker> {
  const started = await startEmbeddedBroker({
    host: '127.0.0.1',
    port: 0,
    topics,
    accounts: new MqttAccountRepository(sqliteStore(fixture.db)),
    ...(ingest === undefined ? {} : { ingest }),
  });
  t.teardown(() => started.close());
  return started;
}

async function login(t: ExecutionContext, url: string, username: string, password: string): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, { username, password, reconnectPeriod: 0 });
  t.teardown(() => client.endAsync(true));
  return client;
}

/** The QoS granted for one filter, or 128 when the broker refused it
 * (MQTT.js rejects a SUBACK carrying a refusal). */
async function grant(client: MqttClient, filter: string): Promise<number> {
  try {
    const [granted] = await client.subscribeAsync(filter, { qos: 1 });
    return granted?.qos ?? -1;
  } catch {
    return 128;
  }
}

async function refusedLogin(url: string, username: string, password: string): Promise<number | undefined> {
  try {
    const client = await mqtt.connectAsync(url, { username, password, reconnectPeriod: 0 });
    await client.endAsync(true);
    return undefined;
  } catch (error) {
    return (error as { code?: number }).code;
  }
}

test('every client logs in: unknown users, wrong passwords and anonymous clients are refused', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  t.is(await refusedLogin(started.url, 'box-9101', 'wrong'), 4);
  t.is(await refusedLogin(started.url, 'nobody', 'x'), 4);
  t.is(await refusedLogin(started.url, '', ''), 4);
  const box = await login(t, started.url, 'box-9101', fixture.boxes.get(9101) ?? '');
  t.true(box.connected);
  t.is(started.counters.refusedLogins, 3);
});

test('a box subscribes only to its own command and sim/set topics', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const box = await login(t, started.url, 'box-9101', fixture.boxes.get(9101) ?? '');
  const granted: number[] = [];
  for (const filter of [
    topics.box(9101, 'command'),
    topics.box(9101, 'sim/set'),
    topics.box(9102, 'command'),
    topics.allBoxes('response'),
    '#',
  ])
    granted.push(await grant(box, filter));
  t.deepEqual(granted, [1, 1, 128, 128, 128]);
  t.is(started.counters.refusedSubscriptions, 3);
});

test('a box publishes only its own response, state and availability', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const watcher = await login(t, started.url, fixture.operator.username, fixture.operator.password);
  const seen: string[] = [];
  watcher.on('message', (topic) => seen.push(topic));
  await watcher.subscribeAsync(`${topics.prefix}/#`, { qos: 1 });
  const box = await login(t, started.url, 'box-9101', fixture.boxes.get(9101) ?? '');
  await box.publishAsync(topics.box(9101, 'state'), '{}', { qos: 1 });
  await waitFor(() => seen.includes(topics.box(9101, 'state')), 'its own state delivered');
  // MQTT 3.1.1 has no refusal code for a publish: the broker drops it and closes the connection.
  box.publish(topics.box(9102, 'response'), '{}', { qos: 0 });
  box.publish(topics.box(9101, 'command'), '{}', { qos: 0 });
  await waitFor(() => started.counters.refusedPublishes >= 1, 'the refused publish counted');
  t.false(seen.includes(topics.box(9102, 'response')));
  t.false(seen.includes(topics.box(9101, 'command')));
});

test('a gateway reads every command and speaks for every box and itself; an operator commands and reads all', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const gateway = await login(t, started.url, fixture.gateway.username, fixture.gateway.password);
  const operator = await login(t, started.url, fixture.operator.username, fixture.operator.password);
  t.is(await grant(gateway, topics.allBoxes('command')), 1);
  t.is(await grant(gateway, topics.allBoxes('response')), 128);
  t.is(await grant(operator, '#'), 1);
  const commands: string[] = [];
  gateway.on('message', (topic) => commands.push(topic));
  const everything: string[] = [];
  operator.on('message', (topic) => everything.push(topic));
  await operator.publishAsync(topics.box(9102, 'command'), '{"command":""}', { qos: 1 });
  await operator.publishAsync(topics.box(9102, 'sim/set'), '{}', { qos: 1 });
  await gateway.publishAsync(topics.box(9102, 'response'), '{}', { qos: 1 });
  await gateway.publishAsync(topics.gateway(fixture.gateway.username, 'availability'), 'online', {
    qos: 1,
    retain: true,
  });
  await waitFor(() => commands.includes(topics.box(9102, 'command')), 'the command at the gateway');
  await waitFor(
    () =>
      everything.includes(topics.gateway(fixture.gateway.username, 'availability')) &&
      everything.includes(topics.box(9102, 'response')),
    'the operator reading all',
  );
  t.is(started.counters.refusedPublishes, 0);
});

test('a response is ingested before its publisher gets the PUBACK', async (t) => {
  const fixture = await brokerFixture(t);
  const ingested: { moduleId: number; payload: string; publisher: MqttAccount }[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let began: () => void = () => undefined;
  const ingesting = new Promise<void>((resolve) => (began = resolve));
  const started = await broker(t, fixture, async (moduleId, payload, publisher) => {
    began();
    await gate;
    ingested.push({ moduleId, payload: payload.toString(), publisher });
  });
  const box = await login(t, started.url, 'box-9101', fixture.boxes.get(9101) ?? '');
  const commands: string[] = [];
  box.on('message', (_topic, payload) => commands.push(payload.toString()));
  await box.subscribeAsync(topics.box(9101, 'command'), { qos: 1 });
  let acknowledged = false;
  const publishing = box
    .publishAsync(topics.box(9101, 'response'), '{"x":1}', { qos: 1 })
    .then(() => (acknowledged = true));
  await ingesting;
  // The negative proved by a marker on the same connection: the broker sends
  // the box a command once ingestion has begun; a PUBACK written before
  // ingestion ended would have reached the box ahead of it.
  await started.publish(topics.box(9101, 'command'), '{"command":"marker"}');
  await waitFor(() => commands.length === 1, 'the marker at the box');
  t.false(acknowledged, 'no PUBACK while ingestion is running');
  release();
  await publishing;
  t.deepEqual(ingested, [
    { moduleId: 9101, payload: '{"x":1}', publisher: { role: 'box', username: 'box-9101', moduleId: 9101 } },
  ]);
});

test('a busy MQTT port is one clear error naming it', async (t) => {
  const fixture = await brokerFixture(t);
  const first = await broker(t, fixture);
  const error = await t.throwsAsync(
    startEmbeddedBroker({
      host: '127.0.0.1',
      port: first.port,
      topics,
      accounts: new MqttAccountRepository(sqliteStore(fixture.db)),
    }),
  );
  t.regex(error.message, new RegExp(`MQTT port ${first.port} on 127.0.0.1 is already in use`));
});

test('retained messages still reach exact and wildcard subscriptions (indexed persistence)', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const box = await login(t, started.url, 'box-9101', fixture.boxes.get(9101) ?? '');
  await box.publishAsync(topics.box(9101, 'availability'), 'online', { qos: 1, retain: true });
  await box.publishAsync(topics.box(9101, 'state'), '{"barrier":"closed"}', { qos: 1, retain: true });
  await box.publishAsync(topics.box(9101, 'state'), '', { qos: 1, retain: true });
  const operator = await login(t, started.url, fixture.operator.username, fixture.operator.password);
  const exact: string[] = [];
  const wildcard: string[] = [];
  const other = await login(t, started.url, fixture.operator.username, fixture.operator.password);
  operator.on('message', (topic, payload) => exact.push(`${topic}=${payload.toString()}`));
  other.on('message', (topic, payload) => wildcard.push(`${topic}=${payload.toString()}`));
  await operator.subscribeAsync([topics.box(9101, 'availability'), topics.box(9101, 'state')], { qos: 1 });
  await other.subscribeAsync(topics.allBoxes('availability'), { qos: 1 });
  await waitFor(() => exact.length === 1 && wildcard.length === 1, 'the retained availability, once each');
  t.deepEqual(exact, [`${topics.box(9101, 'availability')}=online`], 'a cleared retained state is not delivered');
  t.deepEqual(wildcard, [`${topics.box(9101, 'availability')}=online`]);
});

// Packets over MQTT_MAX_PACKET_BYTES are refused at their
// fixed header; nothing of them is published or retained.
test('a logged-in client publishing an oversized retained message is disconnected and nothing is retained', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const box = await login(t, started.url, 'box-9101', fixture.boxes.get(9101) ?? '');
  await box.publishAsync(topics.box(9101, 'state'), JSON.stringify({ pad: 'x'.repeat(60_000) }), {
    qos: 1,
    retain: true,
  });
  const closed = new Promise<void>((resolve) => box.once('close', () => resolve()));
  box.publish(topics.box(9101, 'availability'), Buffer.alloc(100 * 1024 * 1024, 0x41), { qos: 1, retain: true });
  await Promise.race([
    closed,
    new Promise((_resolve, reject) => setTimeout(() => reject(new Error('still connected after 5 s')), 5_000)),
  ]);
  t.is(started.counters.refusedPackets, 1);

  const operator = await login(t, started.url, fixture.operator.username, fixture.operator.password);
  const retained: string[] = [];
  operator.on('message', (topic, payload) => retained.push(`${topic}:${payload.length}`));
  await operator.subscribeAsync(topics.allBoxes('state'), { qos: 1 });
  await operator.subscribeAsync(topics.allBoxes('availability'), { qos: 1 });
  // What the broker retains under those filters, listed to the end (the
  // positive event), is what the operator must get: nothing more is coming.
  const stored = await retainedUnder(started, [topics.allBoxes('state'), topics.allBoxes('availability')]);
  t.deepEqual(
    stored,
    [`${topics.box(9101, 'state')}:${JSON.stringify({ pad: 'x'.repeat(60_000) }).length}`],
    'nothing of the oversized message retained',
  );
  await waitFor(() => retained.length >= stored.length, 'every retained message delivered');
  t.deepEqual(retained, [`${topics.box(9101, 'state')}:${JSON.stringify({ pad: 'x'.repeat(60_000) }).length}`]);
});

/** The retained messages the broker holds under `filters`, as topic:length
 * (read from its persistence to the stream's end). */
async function retainedUnder(started: EmbeddedBroker, filters: string[]): Promise<string[]> {
  // aedes's types leave its persistence out; it is the one broker.ts gave it.
  const { persistence } = started.aedes as unknown as {
    persistence: { createRetainedStreamCombi(patterns: string[]): AsyncIterable<{ topic: string; payload: Buffer }> };
  };
  const found: string[] = [];
  for await (const packet of persistence.createRetainedStreamCombi(filters))
    found.push(`${packet.topic}:${packet.payload.length}`);
  return found;
}

// A client id (and its stored session) belongs to the
// account that holds it.
async function connectAs(
  url: string,
  username: string,
  password: string,
  clientId: string,
  clean: boolean,
): Promise<{ client?: MqttClient; code?: number; sessionPresent?: boolean }> {
  try {
    const client = mqtt.connect(url, { username, password, clientId, clean, reconnectPeriod: 0 });
    const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('error', reject);
    });
    return { client, sessionPresent: connack.sessionPresent };
  } catch (error) {
    return { code: (error as { code?: number }).code };
  }
}

test('another account cannot take over a stored persistent session, and its owner still gets it', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const operator = await connectAs(
    started.url,
    fixture.operator.username,
    fixture.operator.password,
    'monitor-2',
    false,
  );
  await operator.client?.subscribeAsync(topics.allBoxes('command'), { qos: 1 });
  await operator.client?.endAsync();
  await started.publish(topics.box(9102, 'command'), '{"command":"AAAA"}');

  const thief = await connectAs(started.url, 'box-9101', fixture.boxes.get(9101) ?? '', 'monitor-2', false);
  const stolen: string[] = [];
  thief.client?.on('message', (topic) => stolen.push(topic));
  await thief.client?.endAsync(true);
  t.deepEqual(
    { code: thief.code, sessionPresent: thief.sessionPresent, stolen },
    { code: 2, sessionPresent: undefined, stolen: [] },
    'refused: identifier rejected',
  );
  t.is(started.counters.refusedLogins, 1);

  const back = await connectAs(started.url, fixture.operator.username, fixture.operator.password, 'monitor-2', false);
  t.teardown(() => back.client?.endAsync(true));
  const queued: string[] = [];
  back.client?.on('message', (topic) => queued.push(topic));
  t.true(back.sessionPresent);
  // The positive event on the same path: the queued command is still there, for its owner.
  await waitFor(() => queued.length === 1, 'the queued command for its owner');
  t.deepEqual(queued, [topics.box(9102, 'command')]);
});

test('a live client is not kicked by another account reusing its client id; the same account still takes over', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const operator = await connectAs(
    started.url,
    fixture.operator.username,
    fixture.operator.password,
    'shared-id',
    true,
  );
  t.teardown(() => operator.client?.endAsync(true));
  const client = operator.client;
  if (client === undefined) return t.fail('the operator did not connect');
  let closes = 0;
  client.on('close', () => closes++);
  const other = await connectAs(started.url, 'box-9101', fixture.boxes.get(9101) ?? '', 'shared-id', true);
  await other.client?.endAsync(true);
  t.is(other.code, 2);
  // The positive event on the same connection, after the refusal: a PUBACK.
  // A kicked connection never gets one; its close ends the wait instead.
  const kickedFirst = new Promise<never>((_resolve, reject) =>
    client.once('close', () => reject(new Error('the operator was disconnected'))),
  );
  await Promise.race([client.publishAsync(topics.box(9102, 'command'), '{"command":"AAAA"}', { qos: 1 }), kickedFirst]);
  t.true(client.connected, 'the operator stays connected');
  t.is(closes, 0);

  // The same account reconnecting with its id replaces its old connection (MQTT-3.1.4-2).
  const kicked = new Promise<void>((resolve) => operator.client?.once('close', () => resolve()));
  const again = await connectAs(started.url, fixture.operator.username, fixture.operator.password, 'shared-id', true);
  t.teardown(() => again.client?.endAsync(true));
  await kicked;
  t.true(again.client?.connected);
});

test('a clean client id is free for another account once its holder has left', async (t) => {
  const fixture = await brokerFixture(t);
  const started = await broker(t, fixture);
  const operator = await connectAs(
    started.url,
    fixture.operator.username,
    fixture.operator.password,
    'passing-id',
    true,
  );
  await operator.client?.endAsync();
  await waitFor(() => started.aedes.connectedClients === 0, 'the operator gone');
  const box = await connectAs(started.url, 'box-9101', fixture.boxes.get(9101) ?? '', 'passing-id', true);
  t.teardown(() => box.client?.endAsync(true));
  t.true(box.client?.connected);
});

/** An MQTT 3.1.1 CONNECT with clean session, a username and a password. */
function connectPacket(clientId: string, username: string, password: string): Buffer {
  const field = (text: string): Buffer => {
    const bytes = Buffer.from(text, 'utf8');
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  const body = Buffer.concat([
    field('MQTT'),
    Buffer.from([4, 0xc2, 0, 60]),
    field(clientId),
    field(username),
    field(password),
  ]);
  return Buffer.concat([Buffer.from([0x10, body.length]), body]);
}

test('a connection reset while its login is checked holds no client id', async (t) => {
  const fixture = await brokerFixture(t);
  // The password check of one login waits for the test: the connection goes meanwhile.
  let loginStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (loginStarted = resolve));
  let finishLogin: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (finishLogin = resolve));
  let loginDone: () => void = () => undefined;
  const loginFinished = new Promise<void>((resolve) => (loginDone = resolve));
  class SlowAccounts extends MqttAccountRepository {
    override async authenticate(username: string, password: string): Promise<MqttAccount | null> {
      if (username !== fixture.operator.username) return super.authenticate(username, password);
      loginStarted();
      await gate;
      try {
        return await super.authenticate(username, password);
      } finally {
        setImmediate(loginDone);
      }
    }
  }
  const slow = await startEmbeddedBroker({
    host: '127.0.0.1',
    port: 0,
    topics,
    accounts: new SlowAccounts(sqliteStore(fixture.db)),
  });
  t.teardown(() => slow.close());
  // The broker's side of the connection has emitted 'close', so broker.ts's
  // close handler (registered first) has run: aedes reports the ECONNRESET as
  // the socket is destroyed, and its 'close' follows.
  const brokerSawReset = new Promise<void>((resolve) => {
    slow.aedes.once('clientError', (client: Client) => client.conn.once('close', () => resolve()));
  });
  const socket = createConnection({ host: '127.0.0.1', port: slow.port });
  socket.on('error', () => undefined);
  socket.write(connectPacket('short-lived', fixture.operator.username, fixture.operator.password));
  await started;
  socket.resetAndDestroy();
  await brokerSawReset;
  finishLogin();
  await loginFinished;
  await new Promise((resolve) => setImmediate(resolve)); // the broker's continuation of the login (claim or not) has run
  const box = await connectAs(slow.url, 'box-9101', fixture.boxes.get(9101) ?? '', 'short-lived', true);
  t.teardown(() => box.client?.endAsync(true));
  t.is(box.code, undefined, 'not refused');
  t.true(box.client?.connected);
});
