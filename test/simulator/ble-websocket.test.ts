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
import type { Provisioning } from '../../simulator/provisioning.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);
const probe = fileURLToPath(new URL('../fixtures/ble-probe.ts', import.meta.url));

test.serial('a central in another process with NOBLE_WEBSOCKET=1 opens a simulated box', async (t) => {
  const box_: Provisioning = {
    moduleId: 9401,
    parkingId: 7,
    direction: 'exit',
    macAddress: '00:07:80:AA:BB:41',
    parkingKey: randomBytes(16),
    parkingKeyNext: null,
    boxKey: randomBytes(16),
    skewSeconds: 120,
    minBatteryMv: 3_300,
    mqtt: null,
  };
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
  const { stdout: output } = await promisify(execFile)(process.execPath, ['--import', 'tsx', probe, '9401', command.toString('hex')], {
    env: { ...process.env, NOBLE_WEBSOCKET: '1' },
    timeout: 30_000,
  });
  const line = output.split('\n').find((text) => text.startsWith('{')) ?? '{}';
  const outcome = JSON.parse(line) as { response?: string };
  t.truthy(outcome.response, output);
  const response = Buffer.from(outcome.response ?? '', 'hex');
  t.true(verifyResponse(response, box_.boxKey, command));
  t.is(parseResponse(response).status, Status.OK);
  t.is(parseResponse(response).remaining, 0);
  t.is(box.barrier.state, 'opening');
});
