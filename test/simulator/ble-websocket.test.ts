// The virtual radio across processes: the simulator serves noble's
// NOBLE_WEBSOCKET protocol on its fixed port (2846), and a central in another
// process, running noble's own WebSocket client, reaches the box. The port is
// fixed by noble, so every test that uses it lives in this file, in series.
import test from 'ava';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FakeClock } from '../../lib/fake-clock.js';
import { FrameKind, parseResponse, sealCommand, Status, verifyResponse } from '../../firmware-protocol/index.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxBlePeripheral } from '../../simulator/links/ble-link.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { serveNobleWebSocket } from '../../simulator/ble/websocket-radio.js';
import type { SealedProvisioning as Provisioning } from '../../lib/provisioning-file.js';
import { testProvisioning } from '../helpers/box-provisioning.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { Topics } from '../../lib/mqtt-topics.js';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { waitFor } from '../helpers/wait.js';

const topics = new Topics();

const START = Date.UTC(2026, 5, 1, 8, 0, 0);
const probe = fileURLToPath(new URL('../fixtures/ble-probe.ts', import.meta.url));

test.serial('a central in another process with NOBLE_WEBSOCKET=1 opens a simulated box', async (t) => {
  const box_: Provisioning = testProvisioning({ moduleId: 9401, direction: 'exit', macAddress: '00:07:80:AA:BB:41' });
  const radio = new VirtualRadio();
  const box = await SimulatedBox.start({ clock: new FakeClock(START), provisioning: box_ });
  const peripheral = new BoxBlePeripheral(box);
  radio.add(peripheral);
  const server = await serveNobleWebSocket(radio);
  t.teardown(async () => {
    await server.close();
    peripheral.detach();
    await box.stop();
  });
  const command = sealCommand({
    kind: FrameKind.ACCESS,
    key: box_.parkingKey,
    keyId: 77,
    scope: 7,
    body: { notBefore: START / 1000 - 60, notAfter: START / 1000 + 60, maxEntries: 1, maxExits: 1, moduleIds: [9401] },
  });
  const { stdout: output } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', probe, '9401', command.toString('hex')],
    {
      env: { ...process.env, NOBLE_WEBSOCKET: '1' },
      timeout: 30_000,
    },
  );
  const line = output.split('\n').find((text) => text.startsWith('{')) ?? '{}';
  const outcome = JSON.parse(line) as { response?: string };
  t.truthy(outcome.response, output);
  const response = Buffer.from(outcome.response ?? '', 'hex');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.is(parseResponse(response).status, Status.OK);
  t.is(parseResponse(response).remaining, 0);
  t.is(box.barrier.state, 'opening');
});

test.serial(
  'parkbench gateway --ble (NOBLE_WEBSOCKET=1) relays MQTT commands to parkbench sim --ble in another process',
  async (t) => {
    const broker = await brokerForTest(t);
    const directory = await mkdtemp(join(tmpdir(), 'pb-ble-cli-'));
    t.teardown(() => rm(directory, { recursive: true, force: true }));
    const parkingKey = randomBytes(16);
    const boxKey = randomBytes(16);
    const boxFile = join(directory, 'box.json');
    await writeFile(
      boxFile,
      JSON.stringify({
        module_id: 9402,
        parking_id: 7,
        direction: 'entrance',
        mac_address: '00:07:80:AA:BB:42',
        parking_key: parkingKey.toString('hex'),
        parking_key_next: null,
        box_key: boxKey.toString('hex'),
        skew_seconds: 120,
        min_battery_mv: 3300,
        mqtt: null,
      }),
    );
    const sim = startCli(t, ['sim', '--box', boxFile, '--ble', '--memory-state', '--log-level', 'warn']);
    await sim.waitForLine(/^parkbench sim ready /);
    const gateway = startCli(
      t,
      [
        'gateway',
        '--mqtt',
        broker.url,
        '--username',
        'gw-ws',
        '--password',
        'x',
        '--ble',
        '--queue-file',
        join(directory, 'queue.json'),
        '--log-level',
        'warn',
      ],
      { NOBLE_WEBSOCKET: '1' },
    );
    await gateway.waitForLine(/^parkbench gateway ready /);
    const operator = await mqtt.connectAsync(broker.url);
    t.teardown(() => operator.endAsync(true));
    const responses: string[] = [];
    const online: string[] = [];
    operator.on('message', (topic, payload) =>
      (topic.endsWith('/response') ? responses : online).push(payload.toString()),
    );
    await operator.subscribeAsync([topics.box(9402, 'response'), topics.box(9402, 'availability')], { qos: 1 });
    await waitFor(() => online.includes('online'), 'the gateway to reach the box over BLE', 15_000);
    const now = Math.floor(Date.now() / 1000);
    const command = sealCommand({
      kind: FrameKind.ACCESS,
      key: parkingKey,
      keyId: 8,
      scope: 7,
      body: { notBefore: now - 60, notAfter: now + 60, maxEntries: 1, maxExits: 1, moduleIds: [9402] },
    });
    await operator.publishAsync(topics.box(9402, 'command'), JSON.stringify({ command: command.toString('base64') }), {
      qos: 1,
    });
    await waitFor(() => responses.length === 1, 'the response', 15_000);
    const message = JSON.parse(responses[0] ?? '{}') as { response: string; via: string };
    t.is(message.via, 'ble');
    const response = Buffer.from(message.response, 'base64');
    t.true(verifyResponse(response, boxKey, command));
    t.is(parseResponse(response).status, Status.OK);
    t.is(await gateway.stop(), 0);
    t.is(await sim.stop(), 0);
  },
);
