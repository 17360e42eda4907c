// The gateway's real noble code against simulated boxes on the virtual
// radio, in process (noble's with-bindings injection point).
import test from 'ava';
import mqtt from 'mqtt';
import { FakeClock } from '../../lib/fake-clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import {
  FrameKind,
  MAX_COMMAND_LENGTH,
  parseResponse,
  sealCommand,
  Status,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxBlePeripheral, DEFAULT_BLE_MTU } from '../../simulator/links/ble-link.js';
import type { CentralConnection } from '../../simulator/ble/virtual-radio.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { Gateway } from '../../gateway/gateway.js';
import { loadNoble } from '../../lib/noble.js';
import type { SealedProvisioning as Provisioning } from '../../lib/provisioning-file.js';
import { testProvisioning } from '../helpers/box-provisioning.js';
import { brokerForTest } from '../helpers/broker.js';
import { newIssuer, signedAccess, signedProvisioning, thirtyTwoModules } from '../helpers/signed-box.js';
import { waitFor } from '../helpers/wait.js';

const topics = new Topics();
const START = Date.UTC(2026, 5, 1, 8, 0, 0);

test('commands on MQTT reach a BLE box through the gateway; via is ble', async (t) => {
  const broker = await brokerForTest(t);
  const clock = new FakeClock(START);
  const box_: Provisioning = testProvisioning({ moduleId: 9901, direction: 'exit', macAddress: '00:07:80:AA:DD:01' });
  const radio = new VirtualRadio();
  const box = await SimulatedBox.start({ clock, provisioning: box_ });
  const peripheral = new BoxBlePeripheral(box);
  radio.add(peripheral);
  const bindings = radio.createBindings();
  const gateway = new Gateway({
    mqtt: { url: broker.url, username: 'gw-ble', password: 'x' },
    topics,
    clock,
    serial: [],
    ble: { noble: await loadNoble(bindings), allow: ['00:07:80:AA:DD:01'] },
    answerTimeoutMs: 5_000,
  });
  t.teardown(async () => {
    await gateway.stop();
    bindings.close();
    peripheral.detach();
    await box.stop();
  });
  const operator = await mqtt.connectAsync(broker.url);
  t.teardown(() => operator.endAsync(true));
  const received: { topic: string; payload: string }[] = [];
  operator.on('message', (topic, payload) => received.push({ topic, payload: payload.toString() }));
  await operator.subscribeAsync(`${topics.prefix}/boxes/#`, { qos: 1 });
  await gateway.start();
  await waitFor(
    () => gateway.boxes.some((entry) => entry.moduleId === 9901 && entry.via === 'ble'),
    'the box discovered over BLE',
  );
  const command = sealCommand({
    kind: FrameKind.ACCESS,
    key: box_.parkingKey,
    keyId: 5,
    scope: 7,
    body: {
      notBefore: START / 1000 - 60,
      notAfter: START / 1000 + 60,
      maxEntries: 2,
      maxExits: 2,
      moduleIds: [9901, 9902],
    },
  });
  await operator.publishAsync(
    topics.box(9901, 'command'),
    JSON.stringify({ command: command.toString('base64'), context: { smart_key_id: 5 } }),
    { qos: 1 },
  );
  await waitFor(() => received.some((m) => m.topic === topics.box(9901, 'response')), 'the response');
  const message = JSON.parse(received.find((m) => m.topic === topics.box(9901, 'response'))?.payload ?? '{}') as {
    response: string;
    via: string;
    context: unknown;
  };
  t.is(message.via, 'ble');
  t.deepEqual(message.context, { smart_key_id: 5 });
  const response = Buffer.from(message.response, 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.is(parseResponse(response).status, Status.OK);
  t.is(parseResponse(response).remaining, 1);
});

/** The simulated box's BLE side, recording the size of every ATT value that
 * crosses the air (the box's code is unchanged: it only watches). */
class WatchedPeripheral extends BoxBlePeripheral {
  readonly writeLengths: number[] = [];
  readonly notifyLengths: number[] = [];

  override connected(connection: CentralConnection): void {
    super.connected(connection);
    const notify = connection.notify.bind(connection);
    connection.notify = (uuid, data) => {
      this.notifyLengths.push(data.length);
      notify(uuid, data);
    };
  }

  override written(connection: CentralConnection, characteristicUuid: string, data: Buffer): void {
    this.writeLengths.push(data.length);
    super.written(connection, characteristicUuid, data);
  }
}

test('docs/protocol.md, Sizes: the largest command, a 225-byte ACCESS_SIGNED of 32 modules, goes from MQTT through the gateway to a signed BLE box in 12 chunks at the minimum MTU (23) and is answered OK', async (t) => {
  const broker = await brokerForTest(t);
  const clock = new FakeClock(START);
  const issuer = newIssuer();
  const box_ = signedProvisioning(issuer, { moduleId: 9903, macAddress: '00:07:80:AA:DD:03' });
  const radio = new VirtualRadio();
  const box = await SimulatedBox.start({ clock, provisioning: box_ });
  const peripheral = new WatchedPeripheral(box);
  t.is(peripheral.mtu, DEFAULT_BLE_MTU);
  t.is(DEFAULT_BLE_MTU, 23, 'the smallest ATT MTU of BLE');
  radio.add(peripheral);
  const bindings = radio.createBindings();
  const gateway = new Gateway({
    mqtt: { url: broker.url, username: 'gw-ble-2', password: 'x' },
    topics,
    clock,
    serial: [],
    ble: { noble: await loadNoble(bindings), allow: [] },
    answerTimeoutMs: 5_000,
  });
  t.teardown(async () => {
    await gateway.stop();
    bindings.close();
    peripheral.detach();
    await box.stop();
  });
  const operator = await mqtt.connectAsync(broker.url);
  t.teardown(() => operator.endAsync(true));
  const received: { topic: string; payload: string }[] = [];
  operator.on('message', (topic, payload) => received.push({ topic, payload: payload.toString() }));
  await operator.subscribeAsync(topics.box(9903, 'response'), { qos: 1 });
  await gateway.start();
  await waitFor(
    () => gateway.boxes.some((entry) => entry.moduleId === 9903 && entry.via === 'ble'),
    'the box discovered over BLE',
  );
  const command = signedAccess(box_, issuer, { nowSeconds: START / 1000, moduleIds: thirtyTwoModules(9903) });
  t.is(command.length, MAX_COMMAND_LENGTH);
  await operator.publishAsync(
    topics.box(9903, 'command'),
    JSON.stringify({ command: command.toString('base64'), context: { smart_key_id: 42 } }),
    { qos: 1 },
  );
  await waitFor(() => received.length === 1, 'the response');
  const message = JSON.parse(received[0]?.payload ?? '{}') as { response: string; via: string };
  t.is(message.via, 'ble');
  const response = Buffer.from(message.response, 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.like(parseResponse(response), { status: Status.OK, kind: FrameKind.ACCESS_SIGNED, keyId: 42 });
  // Chunks of a header byte and up to MTU - 4 bytes: every ATT value fits in MTU - 3.
  t.deepEqual(peripheral.writeLengths, [...Array.from({ length: 11 }, () => 20), 1 + (225 - 11 * 19)]);
  t.true(peripheral.notifyLengths.every((length) => length <= DEFAULT_BLE_MTU - 3));
  t.is(peripheral.counters.badChunks, 0);
  t.is(gateway.badFrames, 0);
});
