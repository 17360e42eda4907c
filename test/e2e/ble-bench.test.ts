// The same bench through BLE, in process: the gateway's real
// noble code, built on the simulator's virtual radio through noble's
// with-bindings injection point, reaches a simulated box advertising as a
// BLE peripheral; the API with its embedded broker stores the answer and the
// session moves to active. (Across processes, over noble's fixed WebSocket
// port, is test/simulator/ble-websocket.test.ts.)
import test from 'ava';
import { Gateway } from '../../gateway/gateway.js';
import { loadNoble } from '../../lib/noble.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { BoxBlePeripheral } from '../../simulator/links/ble-link.js';
import { parseProvisioning } from '../../lib/provisioning-file.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import {
  addMqttClient,
  benchApp,
  boxLogs,
  httpDriver,
  openSession,
  provisioningFile,
  responsesOf,
  topics,
  watchingOperator,
} from '../helpers/mqtt-bench.js';
import { waitFor } from '../helpers/wait.js';

test('an access command reaches a BLE box through the gateway; its answer, via ble, makes the session active', async (t) => {
  const app = await benchApp(t);
  const url = app.mqtt?.url ?? '';
  const box = app.parking.entrance;

  const radio = new VirtualRadio();
  const simulated = await SimulatedBox.start({
    clock: app.clock,
    provisioning: parseProvisioning((await provisioningFile(app, box.moduleId)).file),
  });
  const peripheral = new BoxBlePeripheral(simulated);
  radio.add(peripheral);
  const bindings = radio.createBindings();
  const gateway = new Gateway({
    mqtt: { url, ...(await addMqttClient(app, 'gateway', 'gw-ble-e2e', 'gateway-password')) },
    topics,
    clock: app.clock,
    serial: [],
    ble: { noble: await loadNoble(bindings), allow: [box.macAddress] },
    answerTimeoutMs: 5_000,
  });
  t.teardown(async () => {
    await gateway.stop();
    bindings.close();
    peripheral.detach();
    await simulated.stop();
  });
  const { client: operator, seen } = await watchingOperator(
    t,
    url,
    await addMqttClient(app, 'operator', 'op-ble-e2e', 'operator-password'),
  );
  await gateway.start();
  await waitFor(
    () =>
      seen.some(
        (message) => message.topic === topics.box(box.moduleId, 'availability') && message.payload === 'online',
      ),
    'the box discovered over BLE and online',
  );

  const driver = await httpDriver(app);
  const session = await openSession(driver, app.parking.id);
  await operator.publishAsync(topics.box(box.moduleId, 'command'), JSON.stringify({ command: session.accessCommand }), {
    qos: 1,
  });
  await waitFor(() => responsesOf(seen, box.moduleId).length === 1, 'the response message', 10_000);
  t.is(responsesOf(seen, box.moduleId)[0]?.via, 'ble');
  t.is(simulated.barrier.state, 'opening');

  const logs = await boxLogs(app);
  t.is(logs.length, 1);
  t.like(logs[0], { source: 'mqtt', verified: 1, smart_key_id: session.smartKeyId, type: 'in' });
  t.is((await driver.current()).state, 'active');
});
