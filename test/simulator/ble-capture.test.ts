// A simulation on the virtual BLE radio recording to a capture file: each
// chunk both ways, the frame after its chunks, and the frame opened with the
// box's keys. The central is the gateway's noble code (lib/ble-central.ts).
import test, { type ExecutionContext } from 'ava';
import { join } from 'node:path';
import { chunkFrame, FrameKind, parseResponse, sealCommand, Status } from '../../firmware-protocol/index.js';
import { CaptureFile } from '../../lib/capture/capture-file.js';
import { OpenedOutcome } from '../../lib/capture/opened.js';
import { CaptureLink } from '../../lib/capture/record.js';
import { BleCentral } from '../../lib/ble-central.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { systemClock } from '../../lib/clock.js';
import { loadNoble } from '../../lib/noble.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { Simulation } from '../../simulator/simulation.js';
import { tempDir } from '../helpers/api-app.js';
import { testProvisioning } from '../helpers/box-provisioning.js';
import { recordsOn, recordWords } from '../helpers/capture-records.js';
import { readCapture } from '../helpers/pcapng.js';
import { waitFor } from '../helpers/wait.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);

/** A simulated box on a virtual radio recording to a capture file, and the
 * gateway's central that has found it. */
async function recordingBox(t: ExecutionContext, moduleId: number, macAddress: string) {
  const path = join(tempDir(t, 'parkbench-ble-capture-'), 'ble.pcapng');
  const capture = new CaptureFile({ path, application: 'parkbench test sim' });
  const box = testProvisioning({ moduleId, macAddress });
  const radio = new VirtualRadio();
  const simulation = await Simulation.start({
    members: [{ provisioning: box, settings: {} }],
    clock: new FakeClock(START),
    stateDir: null,
    ble: { radio, mtu: 23 },
    capture,
  });
  t.teardown(() => simulation.stop());
  const bindings = radio.createBindings();
  const central = new BleCentral({ noble: await loadNoble(bindings), clock: systemClock, idleMs: 60_000 });
  t.teardown(async () => {
    await central.stop();
    bindings.close();
  });
  await central.start();
  await waitFor(() => central.boxes.includes(moduleId), 'the box discovered');
  return { path, capture, box, central };
}

test('over BLE: the chunks both ways, each frame after its chunks, and an opened record after each frame', async (t) => {
  const { path, capture, box, central } = await recordingBox(t, 9461, '00:07:80:AA:CA:61');

  // 32 modules: 169 bytes, 9 chunks at the MTU of 23.
  const modules = [9461, ...Array.from({ length: 31 }, (_, index) => 1_000 + index)];
  const command = sealCommand({
    kind: FrameKind.ACCESS,
    key: box.parkingKey,
    keyId: 7,
    scope: box.parkingId,
    body: { notBefore: START / 1000 - 60, notAfter: START / 1000 + 60, maxEntries: 2, maxExits: 2, moduleIds: modules },
  });
  const outcome = await central.send(9461, command, 5_000);
  if (!('response' in outcome)) return t.fail(`no response: ${outcome.error}`);
  t.is(parseResponse(outcome.response).status, Status.OK);
  // The barrier starts opening: a status report, notified.
  await waitFor(
    () =>
      recordsOn(readCapture(path).packets, 'ble:PB-9461').filter((r) => recordWords(r) === 'from opened').length === 2,
    'the report of OPENING recorded',
  );
  capture.close();

  const contents = readCapture(path);
  t.deepEqual(contents.interfaces, [{ name: 'ble:PB-9461', description: 'parkbench sim', linkType: 147 }]);
  const records = recordsOn(contents.packets, 'ble:PB-9461');
  t.true(records.every((record) => record.link === CaptureLink.ble && record.moduleId === 9461));
  const commandChunks = chunkFrame(command, 23);
  const responseChunks = chunkFrame(outcome.response, 23);
  t.is(commandChunks.length, 9);
  t.deepEqual(records.map(recordWords), [
    ...commandChunks.map(() => 'to chunk'),
    'to frame',
    'to opened',
    ...responseChunks.map(() => 'from chunk'),
    'from frame',
    'from opened',
    ...responseChunks.map(() => 'from chunk'),
    'from frame',
    'from opened',
  ]);
  t.deepEqual(
    records.slice(0, 9).map((record) => Buffer.from(record.data)),
    commandChunks,
  );
  t.deepEqual(Buffer.from(records[9]?.data ?? []), command);
  const opened = Buffer.from(records[10]?.data ?? []);
  t.deepEqual([...opened.subarray(0, 2)], [FrameKind.ACCESS, OpenedOutcome.opened]);
  t.is(opened[12], 32, 'module_count, after not_before, not_after, max_entries and max_exits');
  t.deepEqual(Buffer.from(records[11 + responseChunks.length]?.data ?? []), outcome.response);
  const reportOpened = Buffer.from(records.at(-1)?.data ?? []);
  t.deepEqual([...reportOpened], [0, OpenedOutcome.opened], 'a status report verifies without a command');
});

test('over BLE: chunks the box drops as they arrive are marked not a frame; the chunks of a frame are not', async (t) => {
  const { path, capture, central } = await recordingBox(t, 9462, '00:07:80:AA:CA:62');

  // Out of order (counter 5 first), then one while waiting for a start, then
  // a first chunk (counter 0) that starts a frame: kept, so not marked.
  const garbage = ['05dead', '83beef', '0001010000'].map((hex) => Buffer.from(hex, 'hex'));
  t.true(await central.writeRaw(9462, garbage));
  await waitFor(
    () =>
      recordsOn(readCapture(path).packets, 'ble:PB-9462').filter((r) => recordWords(r).startsWith('to ')).length === 3,
    'the three chunks recorded',
  );
  capture.close();
  const records = recordsOn(readCapture(path).packets, 'ble:PB-9462').filter((r) => recordWords(r).startsWith('to '));
  t.deepEqual(
    records.map((record) => [recordWords(record), Buffer.from(record.data).toString('hex')]),
    [
      ['to chunk!', '05dead'],
      ['to chunk!', '83beef'],
      ['to chunk', '0001010000'],
    ],
  );
});
