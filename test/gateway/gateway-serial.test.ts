// The gateway with real parts: a real aedes broker, real MQTT clients, a
// socat pty pair as the cable, and a simulated box on the other end.
import avaTest, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { SerialPort } from 'serialport';
import { FakeClock } from '../../lib/fake-clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import {
  cobsEncode,
  crc16,
  encodeLinkFrame,
  FrameKind,
  LinkType,
  MAX_COMMAND_LENGTH,
  MAX_LINK_FRAME_LENGTH,
  parseResponse,
  Status,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxSerialLink } from '../../simulator/links/serial-link.js';
import type {
  Provisioning as AnyProvisioning,
  SealedProvisioning as Provisioning,
} from '../../lib/provisioning-file.js';
import { sealedAccess, testProvisioning } from '../helpers/box-provisioning.js';
import { newIssuer, signedAccess, signedProvisioning, thirtyTwoModules } from '../helpers/signed-box.js';
import { Gateway } from '../../gateway/gateway.js';
import { brokerForTest, startBroker } from '../helpers/broker.js';
import { startPtyPair } from '../../testkit/pty-pair.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { waitFor } from '../helpers/wait.js';
import { testNeeding } from '../helpers/requires.js';

// Skipped, with one line naming the package, where socat is not installed (a failure under CI).
const test = testNeeding('socat', avaTest);

const topics = new Topics();
const START = Date.UTC(2026, 5, 1, 8, 0, 0);

function provisioning(moduleId: number): Provisioning {
  return testProvisioning({ moduleId, macAddress: '00:07:80:AA:CC:01' });
}

function access(box: Provisioning, keyId = 42): Buffer {
  return sealedAccess(box, { keyId, nowSeconds: START / 1000, tries: 9 });
}

interface Received {
  topic: string;
  payload: string;
}

async function operator(t: ExecutionContext, url: string): Promise<{ client: mqtt.MqttClient; received: Received[] }> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 100 });
  t.teardown(() => client.endAsync(true));
  const received: Received[] = [];
  client.on('message', (topic, payload) => received.push({ topic, payload: payload.toString() }));
  await client.subscribeAsync([`${topics.prefix}/boxes/#`, `${topics.prefix}/gateways/#`], { qos: 1 });
  return { client, received };
}

async function boxOnCable(t: ExecutionContext, clock: FakeClock, path: string, box_: AnyProvisioning) {
  const box = await SimulatedBox.start({ clock, provisioning: box_ });
  const link = new BoxSerialLink(box, { clock, target: { path, baudRate: 115_200 } });
  t.teardown(async () => {
    await link.stop();
    await box.stop();
  });
  await link.start();
  return { box, link };
}

async function gatewayOn(t: ExecutionContext, clock: FakeClock, url: string, serialPath: string): Promise<Gateway> {
  const gateway = new Gateway({
    mqtt: { url, username: 'gw-test', password: 'x' },
    topics,
    clock,
    serial: [{ path: serialPath, baudRate: 115_200 }],
    answerTimeoutMs: 2_000,
  });
  t.teardown(() => gateway.stop());
  await gateway.start();
  return gateway;
}

const responses = (received: Received[], moduleId: number) =>
  received
    .filter((message) => message.topic === topics.box(moduleId, 'response'))
    .map((message) => JSON.parse(message.payload) as Record<string, unknown>);

test('a command published on MQTT reaches the box over serial; its response comes back with via and context', async (t) => {
  const broker = await brokerForTest(t);
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  const box_ = provisioning(9801);
  await boxOnCable(t, clock, pair.a, box_);
  const { client, received } = await operator(t, broker.url);
  const gateway = await gatewayOn(t, clock, broker.url, pair.b);
  await waitFor(() => gateway.boxes.some((box) => box.moduleId === 9801), 'the box identified by its status report');
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9801, 'availability') && m.payload === 'online'),
    'the box online',
  );
  await waitFor(
    () => received.some((m) => m.topic === topics.gateway('gw-test', 'availability') && m.payload === 'online'),
    'the gateway online',
  );
  const command = access(box_);
  await client.publishAsync(
    topics.box(9801, 'command'),
    JSON.stringify({ command: command.toString('base64'), context: { request_id: 'r-9', fo_user_id: 3 } }),
    { qos: 1 },
  );
  await waitFor(() => responses(received, 9801).length === 1, 'the response');
  const message = responses(received, 9801)[0] ?? {};
  t.is(message.via, 'serial');
  t.deepEqual(message.context, { request_id: 'r-9', fo_user_id: 3 });
  t.is(message.error, undefined);
  const response = Buffer.from(String(message.response), 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.is(parseResponse(response).status, Status.OK);
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9801, 'state') && m.payload.includes('"barrier":"opening"')),
    'the box state',
  );
  clock.advance(1_000);
  await waitFor(() => received.some((m) => m.topic === topics.gateway('gw-test', 'state')), 'the gateway state');
});

test('a box that does not answer gives a published timeout record', async (t) => {
  const broker = await brokerForTest(t);
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  const box_ = provisioning(9802);
  const { box } = await boxOnCable(t, clock, pair.a, box_);
  box.apply({ faults: { dropCommands: 1 } });
  const { client, received } = await operator(t, broker.url);
  const gateway = await gatewayOn(t, clock, broker.url, pair.b);
  await waitFor(() => gateway.boxes.length === 1, 'the box identified');
  await client.publishAsync(topics.box(9802, 'command'), JSON.stringify({ command: access(box_).toString('base64') }), {
    qos: 1,
  });
  await waitFor(() => box.counters.commandsDropped === 1, 'the command dropped by the box');
  await clock.advanceAsync(2_000);
  await waitFor(() => responses(received, 9802).length === 1, 'the timeout record');
  t.like(responses(received, 9802)[0], { response: null, error: 'timeout', via: 'serial' });
  t.is(gateway.counters.timeouts, 1);
});

test('garbage on the cable is counted and survived; messages that are no command are dropped', async (t) => {
  const broker = await brokerForTest(t);
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  // A raw port as the "box": it sends garbage, then a status report of module 9803.
  const raw = new SerialPort({ path: pair.a, baudRate: 115_200 });
  t.teardown(() => new Promise<void>((resolve) => (raw.isOpen ? raw.close(() => resolve()) : resolve())));
  const box_ = provisioning(9803);
  const { client } = await operator(t, broker.url);
  const gateway = await gatewayOn(t, clock, broker.url, pair.b);
  const box = await SimulatedBox.start({ clock, provisioning: box_ });
  raw.write(Buffer.concat([randomBytes(400).map((byte) => byte | 1), Buffer.from([0])]));
  raw.write(Buffer.from([0x05, 0x81, 0x01, 0x02, 0x03, 0x00]));
  raw.write(encodeLinkFrame(LinkType.STATUS_REPORT, await box.statusReport()));
  await waitFor(() => gateway.boxes.some((entry) => entry.moduleId === 9803), 'the box identified after the garbage');
  t.true(gateway.badFrames >= 2);
  await client.publishAsync(topics.box(9803, 'command'), 'not json', { qos: 1 });
  await waitFor(() => gateway.counters.badMessages === 1, 'the bad message counted');
});

test('the cable pulled and plugged back: the gateway reopens the port, asks for a status report and relays again', async (t) => {
  const broker = await brokerForTest(t);
  const directory = await mkdtemp(join(tmpdir(), 'pb-gw-replug-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const clock = new FakeClock(START);
  const box_ = provisioning(9804);
  const first = await startPtyPair(directory);
  const boxSide = await boxOnCable(t, clock, first.a, box_);
  const { client, received } = await operator(t, broker.url);
  const gateway = await gatewayOn(t, clock, broker.url, first.b);
  await waitFor(() => gateway.boxes.length === 1, 'the box identified');
  await first.close();
  // Each side notices the hang-up on its next write.
  await client.publishAsync(
    topics.box(9804, 'command'),
    JSON.stringify({ command: access(box_, 1).toString('base64') }),
    { qos: 1 },
  );
  await waitFor(() => responses(received, 9804).length === 1, 'the first command answered as link_down or timeout');
  t.is(responses(received, 9804)[0]?.response, null);
  await boxSide.box.handleCommand(access(box_, 2));
  await waitFor(
    () => received.some((m) => m.topic === topics.box(9804, 'availability') && m.payload === 'offline'),
    'the box offline',
  );
  const second = await startPtyPair(directory);
  t.teardown(() => second.close());
  const before = received.filter((m) => m.topic === topics.box(9804, 'availability') && m.payload === 'online').length;
  await clock.advanceAsync(120_000, 1_000);
  await waitFor(
    () =>
      received.filter((m) => m.topic === topics.box(9804, 'availability') && m.payload === 'online').length > before,
    'the box online again',
    10_000,
  );
  await client.publishAsync(
    topics.box(9804, 'command'),
    JSON.stringify({ command: access(box_, 3).toString('base64') }),
    { qos: 1 },
  );
  await waitFor(
    () => responses(received, 9804).some((message) => typeof message.response === 'string'),
    'a response after the replug',
    10_000,
  );
  const answer = responses(received, 9804).find((message) => typeof message.response === 'string');
  t.is(parseResponse(Buffer.from(String(answer?.response), 'base64')).status, Status.OK);
});

test('responses produced while the broker is away are published when it is back', async (t) => {
  const firstBroker = await startBroker();
  t.teardown(() => firstBroker.close());
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  const box_ = provisioning(9805);
  const { box } = await boxOnCable(t, clock, pair.a, box_);
  box.apply({ faults: { delayMs: 1_000 } });
  const gateway = await gatewayOn(t, clock, firstBroker.url, pair.b);
  await waitFor(() => gateway.boxes.length === 1, 'the box identified');
  const sender = await mqtt.connectAsync(firstBroker.url);
  await sender.publishAsync(topics.box(9805, 'command'), JSON.stringify({ command: access(box_).toString('base64') }), {
    qos: 1,
  });
  await sender.endAsync(true);
  await waitFor(() => box.counters.commandsReceived === 1, 'the command at the box');
  await firstBroker.close();
  await waitFor(() => !gateway.connected, 'the gateway to see the broker gone');
  await clock.advanceAsync(1_000, 100);
  await waitFor(() => gateway.queued >= 1, 'the response queued');
  const secondBroker = await startBroker({}, firstBroker.port);
  t.teardown(() => secondBroker.close());
  const { received } = await operator(t, secondBroker.url);
  await clock.advanceAsync(60_000, 1_000);
  await waitFor(() => responses(received, 9805).length === 1, 'the queued response after the broker came back', 10_000);
  t.is(parseResponse(Buffer.from(String(responses(received, 9805)[0]?.response), 'base64')).status, Status.OK);
});

/** A link frame of `type` around `payload`, built by hand (encodeLinkFrame
 * refuses one over 230 bytes), with a valid CRC. */
function handMadeLinkFrame(type: number, payload: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from([type]), payload]);
  const crc = Buffer.alloc(2);
  crc.writeUInt16BE(crc16(typed));
  return Buffer.concat([cobsEncode(Buffer.concat([typed, crc])), Buffer.from([0])]);
}

/** The gateway's serial links as its state message shows them. */
const serialLinks = (gateway: Gateway) =>
  (gateway.snapshot() as { links: { type: string; bad_frames: number }[] }).links.filter(
    (link) => link.type === 'serial',
  );

test('docs/protocol.md, Sizes: the largest command, a 225-byte ACCESS_SIGNED of 32 modules (a 230-byte link frame), goes from MQTT through the gateway and a real pty to a signed box; its OK comes back', async (t) => {
  const broker = await brokerForTest(t);
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  const issuer = newIssuer();
  const box_ = signedProvisioning(issuer, { moduleId: 9806, macAddress: '00:07:80:AA:CC:06' });
  const { link } = await boxOnCable(t, clock, pair.a, box_);
  const { client, received } = await operator(t, broker.url);
  const gateway = await gatewayOn(t, clock, broker.url, pair.b);
  await waitFor(() => gateway.boxes.some((box) => box.moduleId === 9806), 'the box identified');
  const command = signedAccess(box_, issuer, { nowSeconds: START / 1000, moduleIds: thirtyTwoModules(9806) });
  t.is(command.length, MAX_COMMAND_LENGTH);
  t.is(encodeLinkFrame(LinkType.COMMAND, command).length, MAX_LINK_FRAME_LENGTH);
  await client.publishAsync(
    topics.box(9806, 'command'),
    JSON.stringify({ command: command.toString('base64'), context: { smart_key_id: 42 } }),
    { qos: 1 },
  );
  await waitFor(() => responses(received, 9806).length === 1, 'the response');
  const message = responses(received, 9806)[0] ?? {};
  t.like(message, { via: 'serial', command: command.toString('base64'), context: { smart_key_id: 42 } });
  const response = Buffer.from(String(message.response), 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.like(parseResponse(response), { status: Status.OK, kind: FrameKind.ACCESS_SIGNED, keyId: 42 });
  t.is(link.decoderCounters.oversize, 0);
  t.is(gateway.badFrames, 0);
});

test("docs/protocol.md, Sizes: from the box, a 230-byte link frame passes the gateway's decoder and a 231-byte one is dropped and counted as bad framing", async (t) => {
  const broker = await brokerForTest(t);
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  const gateway = await gatewayOn(t, clock, broker.url, pair.b);
  const raw = new SerialPort({ path: pair.a, baudRate: 115_200 });
  t.teardown(() => new Promise<void>((resolve) => (raw.isOpen ? raw.close(() => resolve()) : resolve())));
  await new Promise<void>((resolve) => raw.once('open', () => resolve()));
  const box = await SimulatedBox.start({ clock, provisioning: provisioning(9807) });
  t.teardown(() => box.stop());
  // A box sends no 0x01 frames: this one is whole (230 bytes) but unexpected; one byte more is bad framing.
  const longest = handMadeLinkFrame(LinkType.COMMAND, Buffer.alloc(MAX_COMMAND_LENGTH, 0x11));
  const tooLong = handMadeLinkFrame(LinkType.COMMAND, Buffer.alloc(MAX_COMMAND_LENGTH + 1, 0x11));
  t.is(longest.length, MAX_LINK_FRAME_LENGTH);
  t.is(tooLong.length, MAX_LINK_FRAME_LENGTH + 1);
  raw.write(Buffer.concat([longest, tooLong, encodeLinkFrame(LinkType.STATUS_REPORT, await box.statusReport())]));
  await waitFor(() => gateway.boxes.some((entry) => entry.moduleId === 9807), 'the status report after them');
  t.is(serialLinks(gateway)[0]?.bad_frames, 1, 'the 231-byte frame, dropped by the link decoder');
  t.is(gateway.badFrames, 2, 'and the 230-byte 0x01 frame, counted as unexpected');
});

test('a command message longer than any command (226 bytes) is counted and dropped by the gateway, never put on the cable; the gateway carries on', async (t) => {
  const broker = await brokerForTest(t);
  const pair = await ptyPairForTest(t);
  const clock = new FakeClock(START);
  const issuer = newIssuer();
  const box_ = signedProvisioning(issuer, { moduleId: 9808, macAddress: '00:07:80:AA:CC:08' });
  const { box } = await boxOnCable(t, clock, pair.a, box_);
  const { client, received } = await operator(t, broker.url);
  const gateway = await gatewayOn(t, clock, broker.url, pair.b);
  await waitFor(() => gateway.boxes.some((entry) => entry.moduleId === 9808), 'the box identified');
  const largest = signedAccess(box_, issuer, { nowSeconds: START / 1000, moduleIds: thirtyTwoModules(9808) });
  const tooLong = Buffer.concat([largest, Buffer.from([0])]);
  await client.publishAsync(topics.box(9808, 'command'), JSON.stringify({ command: tooLong.toString('base64') }), {
    qos: 1,
  });
  await waitFor(() => gateway.counters.badMessages === 1, 'the message counted');
  await client.publishAsync(topics.box(9808, 'command'), JSON.stringify({ command: largest.toString('base64') }), {
    qos: 1,
  });
  await waitFor(() => responses(received, 9808).length === 1, 'the response to the next command');
  t.is(parseResponse(Buffer.from(String(responses(received, 9808)[0]?.response), 'base64')).status, Status.OK);
  t.is(box.counters.commandsReceived, 1, 'the box saw only the command that fits');
  t.is(gateway.counters.commands, 1);
});
