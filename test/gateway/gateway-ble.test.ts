// The gateway's real noble code against simulated boxes on the virtual
// radio, in process (noble's with-bindings injection point).
import test from 'ava';
import mqtt from 'mqtt';
import { FakeClock } from '../../lib/fake-clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { FrameKind, parseResponse, sealCommand, Status, verifyResponse } from '../../firmware-protocol/index.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxBlePeripheral } from '../../simulator/links/ble-link.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { Gateway } from '../../gateway/gateway.js';
import { loadNoble } from '../../gateway/ble/noble.js';
import type { SealedProvisioning as Provisioning } from '../../simulator/provisioning.js';
import { testProvisioning } from '../helpers/box-provisioning.js';
import { brokerForTest } from '../helpers/broker.js';
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
  await waitFor(() => gateway.boxes.some((entry) => entry.moduleId === 9901 && entry.via === 'ble'), 'the box discovered over BLE');
  const command = sealCommand({
    kind: FrameKind.ACCESS,
    key: box_.parkingKey,
    keyId: 5,
    scope: 7,
    body: { notBefore: START / 1000 - 60, notAfter: START / 1000 + 60, maxEntries: 2, maxExits: 2, moduleIds: [9901, 9902] },
  });
  await operator.publishAsync(topics.box(9901, 'command'), JSON.stringify({ command: command.toString('base64'), context: { smart_key_id: 5 } }), { qos: 1 });
  await waitFor(() => received.some((m) => m.topic === topics.box(9901, 'response')), 'the response');
  const message = JSON.parse(received.find((m) => m.topic === topics.box(9901, 'response'))?.payload ?? '{}') as { response: string; via: string; context: unknown };
  t.is(message.via, 'ble');
  t.deepEqual(message.context, { smart_key_id: 5 });
  const response = Buffer.from(message.response, 'base64');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.is(parseResponse(response).status, Status.OK);
  t.is(parseResponse(response).remaining, 1);
});
