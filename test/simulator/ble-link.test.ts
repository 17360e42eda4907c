import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { systemClock } from '../../lib/clock.js';
import { FakeClock } from '../../lib/fake-clock.js';
import {
  chunkFrame,
  FrameKind,
  MAX_COMMAND_LENGTH,
  parseResponse,
  Status,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxBlePeripheral } from '../../simulator/links/ble-link.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { BleCentral } from '../../lib/ble-central.js';
import { loadNoble } from '../../lib/noble.js';
import type {
  Provisioning as AnyProvisioning,
  SealedProvisioning as Provisioning,
} from '../../lib/provisioning-file.js';
import { sealedAccess, testProvisioning } from '../helpers/box-provisioning.js';
import { newIssuer, signedAccess, signedProvisioning, thirtyTwoModules } from '../helpers/signed-box.js';
import { waitFor } from '../helpers/wait.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);

function provisioning(moduleId: number, mac: string): Provisioning {
  return testProvisioning({ moduleId, macAddress: mac });
}

function access(box: Provisioning, keyId: number, modules = [box.moduleId]): Buffer {
  return sealedAccess(box, { keyId, nowSeconds: START / 1000, tries: 3, moduleIds: modules });
}

async function boxOnAir(t: ExecutionContext, radio: VirtualRadio, box_: AnyProvisioning, mtu?: number) {
  const clock = new FakeClock(START);
  const box = await SimulatedBox.start({ clock, provisioning: box_ });
  const peripheral = new BoxBlePeripheral(box, mtu);
  radio.add(peripheral);
  t.teardown(async () => {
    radio.remove(peripheral);
    peripheral.detach();
    await box.stop();
  });
  return { clock, box, peripheral };
}

async function central(t: ExecutionContext, radio: VirtualRadio, allow: string[] = []): Promise<BleCentral> {
  const bindings = radio.createBindings();
  const noble = await loadNoble(bindings);
  const ble = new BleCentral({ noble, clock: systemClock, allow, idleMs: 60_000 });
  t.teardown(async () => {
    await ble.stop();
    bindings.close();
  });
  await ble.start();
  return ble;
}

test('an unmodified noble central finds PB-<module_id>, sends a chunked command and gets the chunked response', async (t) => {
  const radio = new VirtualRadio();
  const box_ = provisioning(9301, '00:07:80:AA:BB:31');
  const { box, peripheral } = await boxOnAir(t, radio, box_);
  const ble = await central(t, radio);
  await waitFor(() => ble.boxes.includes(9301), 'the box to be discovered');
  // 32 modules: a 169-byte command, 9 chunks at the default MTU of 23 (19 bytes a chunk).
  const command = access(box_, 42, [9301, ...Array.from({ length: 31 }, (_, index) => 1_000 + index)]);
  const outcome = await ble.send(9301, command, 5_000);
  t.true('response' in outcome);
  if (!('response' in outcome)) return;
  t.true(verifyResponse(outcome.response, box_.boxKey, command));
  t.is(parseResponse(outcome.response).status, Status.OK);
  t.is(box.barrier.state, 'opening');
  t.is(peripheral.counters.commands, 1);
});

test('status reports are notified while a central is connected', async (t) => {
  const radio = new VirtualRadio();
  const box_ = provisioning(9302, '00:07:80:AA:BB:32');
  const { clock } = await boxOnAir(t, radio, box_, 185);
  const ble = await central(t, radio);
  const reports: number[] = [];
  ble.on('report', (_moduleId, frame) => reports.push(parseResponse(frame).barrier));
  await waitFor(() => ble.boxes.includes(9302), 'the box to be discovered');
  await ble.send(9302, access(box_, 1), 5_000);
  await waitFor(() => reports.length >= 1, 'the report of OPENING');
  clock.advance(2_000);
  await waitFor(() => reports.length >= 2, 'the report of OPEN');
  t.deepEqual(reports.slice(0, 2), [1, 2]);
});

test('a box outside the allow-list is not used; a box out of range is link_down', async (t) => {
  const radio = new VirtualRadio();
  const allowed = provisioning(9303, '00:07:80:AA:BB:33');
  const other = provisioning(9304, '00:07:80:AA:BB:34');
  await boxOnAir(t, radio, allowed);
  await boxOnAir(t, radio, other);
  const ble = await central(t, radio, ['00:07:80:aa:bb:33']);
  await waitFor(() => ble.boxes.includes(9303), 'the allowed box');
  t.false(ble.boxes.includes(9304));
  t.deepEqual(await ble.send(9304, access(other, 1), 1_000), { error: 'link_down' });
});

test('garbage chunks are counted by the box, and a valid command still works', async (t) => {
  const radio = new VirtualRadio();
  const box_ = provisioning(9305, '00:07:80:AA:BB:35');
  const { peripheral } = await boxOnAir(t, radio, box_);
  const ble = await central(t, radio);
  await waitFor(() => ble.boxes.includes(9305), 'the box');
  // A frame of version 7: the box answers UNSUPPORTED_VERSION, echoing kind 0 and key_id 0.
  const garbage = await ble.send(9305, Buffer.concat([Buffer.from([7]), randomBytes(59)]), 5_000);
  t.true('response' in garbage && parseResponse(garbage.response).status === Status.UNSUPPORTED_VERSION);
  // Out-of-order chunks straight at the box: dropped and counted.
  const bindings = radio.createBindings();
  t.teardown(() => bindings.close());
  bindings.connect('000780aabb35');
  bindings.write('000780aabb35', '', '6b1d00027a3e4c1b9f5e2d8a3c4b5e6f', Buffer.from([0x05, 1, 2, 3]));
  await waitFor(() => peripheral.counters.badChunks === 1, 'the bad chunk counted');
  const outcome = await ble.send(9305, access(box_, 9), 5_000);
  t.true('response' in outcome && parseResponse(outcome.response).status === Status.OK);
});

test("the largest command, a 225-byte ACCESS_SIGNED of 32 modules, goes in 12 chunks at MTU 23 to a signed parking's box and is answered OK", async (t) => {
  const radio = new VirtualRadio();
  const issuer = newIssuer();
  const box_ = signedProvisioning(issuer, { moduleId: 9306, macAddress: '00:07:80:AA:BB:36' });
  const { box, peripheral } = await boxOnAir(t, radio, box_);
  const ble = await central(t, radio);
  await waitFor(() => ble.boxes.includes(9306), 'the box to be discovered');
  const command = signedAccess(box_, issuer, { nowSeconds: START / 1000, moduleIds: thirtyTwoModules(9306) });
  t.is(command.length, MAX_COMMAND_LENGTH);
  t.is(chunkFrame(command, 23).length, 12, 'MTU 23: 19 bytes a chunk');
  const outcome = await ble.send(9306, command, 5_000);
  t.true('response' in outcome);
  if (!('response' in outcome)) return;
  t.true(verifyResponse(outcome.response, box_.boxKey, command));
  t.like(parseResponse(outcome.response), { status: Status.OK, kind: FrameKind.ACCESS_SIGNED, keyId: 42 });
  t.is(box.barrier.state, 'opening');
  t.is(peripheral.counters.commands, 1);
  t.is(peripheral.counters.badChunks, 0);
});

test('docs/protocol.md, Sizes: a BLE frame of 226 bytes, one more than any command, is dropped and counted by the box, never answered; the next command is', async (t) => {
  const radio = new VirtualRadio();
  const issuer = newIssuer();
  const box_ = signedProvisioning(issuer, { moduleId: 9307, macAddress: '00:07:80:AA:BB:37' });
  const { box, peripheral } = await boxOnAir(t, radio, box_);
  const largest = signedAccess(box_, issuer, { nowSeconds: START / 1000, moduleIds: thirtyTwoModules(9307) });
  const tooLong = Buffer.concat([largest, Buffer.from([0])]);
  // Straight at the box's command characteristic, in 12 well-formed chunks at MTU 23.
  const bindings = radio.createBindings();
  t.teardown(() => bindings.close());
  bindings.connect('000780aabb37');
  for (const chunk of chunkFrame(tooLong, 23))
    bindings.write('000780aabb37', '', '6b1d00027a3e4c1b9f5e2d8a3c4b5e6f', chunk);
  await waitFor(() => peripheral.counters.badChunks === 1, 'the oversize frame counted');
  t.is(peripheral.counters.commands, 0);
  t.is(box.counters.commandsReceived, 0);
  bindings.disconnect('000780aabb37');
  const ble = await central(t, radio);
  await waitFor(() => ble.boxes.includes(9307), 'the box to be discovered');
  const outcome = await ble.send(9307, largest, 5_000);
  t.true('response' in outcome && parseResponse(outcome.response).status === Status.OK);
  t.is(peripheral.counters.commands, 1);
});
