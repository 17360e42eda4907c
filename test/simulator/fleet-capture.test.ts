// A fleet on MQTT recording to one capture file: one interface for the
// broker, each record carrying the module id of its box.
import test from 'ava';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { CaptureFile } from '../../lib/capture/capture-file.js';
import { CaptureDirection } from '../../lib/capture/record.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { Simulation } from '../../simulator/simulation.js';
import { tempDir } from '../helpers/api-app.js';
import { testProvisioning } from '../helpers/box-provisioning.js';
import { brokerForTest } from '../helpers/broker.js';
import { recordsOn, recordWords } from '../helpers/capture-records.js';
import { readCapture } from '../helpers/pcapng.js';
import { waitFor } from '../helpers/wait.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);
const topics = new Topics();

test('a fleet on MQTT: one interface for the broker, each record with its box', async (t) => {
  const path = join(tempDir(t, 'parkbench-fleet-capture-'), 'fleet.pcapng');
  const capture = new CaptureFile({ path, application: 'parkbench test sim' });
  const broker = await brokerForTest(t);
  const boxes = [9491, 9492].map((moduleId) =>
    testProvisioning({ moduleId, macAddress: `00:07:80:AA:CB:${moduleId - 9400}` }),
  );
  const simulation = await Simulation.start({
    members: boxes.map((provisioning) => ({ provisioning, settings: {} })),
    clock: new FakeClock(START),
    stateDir: null,
    mqtt: { url: broker.url, username: 'fleet', password: 'x', topics },
    capture,
  });
  t.teardown(() => simulation.stop());
  const operator = await mqtt.connectAsync(broker.url);
  t.teardown(() => operator.endAsync(true));
  const answered = new Set<string>();
  operator.on('message', (topic) => answered.add(topic));
  await operator.subscribeAsync(topics.prefix + '/boxes/+/response', { qos: 1 });
  for (const box of boxes) {
    const command = sealCommand({ kind: FrameKind.BATTERY_QUERY, key: box.boxKey, keyId: 1, scope: box.moduleId });
    await operator.publishAsync(
      topics.box(box.moduleId, 'command'),
      JSON.stringify({ command: command.toString('base64') }),
      {
        qos: 1,
      },
    );
  }
  await waitFor(() => answered.size === 2, 'both answers');
  await simulation.stop();
  capture.close();

  const contents = readCapture(path);
  const name = `mqtt:${broker.url}`;
  t.deepEqual(
    contents.interfaces.map((entry) => entry.name),
    [name],
  );
  const records = recordsOn(contents.packets, name);
  for (const box of boxes) {
    const own = records.filter((record) => record.moduleId === box.moduleId);
    t.deepEqual(own.map(recordWords), [
      'to message',
      'to frame',
      'to opened',
      'from message',
      'from frame',
      'from opened',
    ]);
    const opened = own.find(
      (record) => record.direction === CaptureDirection.toBox && recordWords(record) === 'to opened',
    );
    t.deepEqual([...(opened?.data ?? [])], [FrameKind.BATTERY_QUERY, 0], 'opened under its own box key');
  }
  t.is(records.length, 12);
});
