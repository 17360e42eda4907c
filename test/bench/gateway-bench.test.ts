// `parkbench gateway --bench FILE` bridges every box of the bench file on a
// serial port or BLE (an MQTT box needs no gateway), plus the flags' links:
// here a simulated box on a pty pair (socat) found through the file alone.
import avaTest, { type ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { simOnPty } from '../helpers/conformance-serial-sim.js';
import { runCli } from '../helpers/run-cli.js';
import { testNeeding } from '../helpers/requires.js';
import { waitFor } from '../helpers/wait.js';
import mqtt from 'mqtt';
import { Topics } from '../../lib/mqtt-topics.js';

const socatTest = testNeeding('socat', avaTest);

async function folder(t: ExecutionContext): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'pb-gateway-bench-'));
  t.teardown(() => rm(path, { recursive: true, force: true }));
  return path;
}

socatTest('the serial box of the bench file is bridged; its MQTT box is left alone', async (t) => {
  const broker = await brokerForTest(t);
  const { box, pair } = await simOnPty(t, 4621);
  const other = await boxFile(t, 4622);
  const dir = await folder(t);
  const bench = join(dir, 'bench.yaml');
  await writeFile(
    bench,
    `boxes:
  - { module_id: 4621, provisioning: ${box.path}, link: { serial: ${pair.b} } }
  - { module_id: 4622, provisioning: ${other.path}, link: { mqtt: "mqtt://127.0.0.1:1883" } }
`,
  );
  const gateway = startCli(t, [
    'gateway',
    '--bench',
    bench,
    '--mqtt',
    broker.url,
    '--username',
    'gw-bench',
    '--password',
    'x',
    '--queue-file',
    join(dir, 'queue.json'),
  ]);
  const ready = await gateway.waitForLine(/^parkbench gateway ready /);
  t.deepEqual(JSON.parse(ready.slice('parkbench gateway ready '.length)), {
    gateway_id: 'gw-bench',
    serial: [pair.b],
    ble: false,
  });
  // The box answered the gateway's status request: it is online through the gateway.
  const client = await mqtt.connectAsync(broker.url);
  t.teardown(() => client.endAsync());
  const availability: string[] = [];
  client.on('message', (_topic, payload) => availability.push(payload.toString()));
  await client.subscribeAsync(new Topics().box(4621, 'availability'), { qos: 1 });
  await waitFor(() => availability.includes('online'), 'box 4621 online', 15_000);
  t.is(await gateway.stop('SIGTERM'), 0);
  const stopped = gateway.stdout.find((line) => line.startsWith('parkbench gateway stopped ')) ?? '';
  const snapshot = JSON.parse(stopped.slice('parkbench gateway stopped '.length)) as { boxes: unknown[] };
  t.deepEqual(snapshot.boxes, [{ module_id: 4621, via: 'serial' }]);
});

avaTest('a bench file with no serial or BLE box and no link flag: one line, exit 2', async (t) => {
  const other = await boxFile(t, 4623);
  const dir = await folder(t);
  const bench = join(dir, 'bench.yaml');
  await writeFile(
    bench,
    `boxes:\n  - { module_id: 4623, provisioning: ${other.path}, link: { mqtt: "mqtt://127.0.0.1:1883" } }\n`,
  );
  const result = await runCli([
    'gateway',
    '--bench',
    bench,
    '--mqtt',
    'mqtt://127.0.0.1:1',
    '--username',
    'gw',
    '--password',
    'x',
  ]);
  t.is(result.code, 2);
  t.is(
    result.stderr,
    `parkbench: ${bench} has no box on a serial port or BLE (MQTT boxes need no gateway), and no --serial or --ble is given\n`,
  );
  const bad = await runCli([
    'gateway',
    '--bench',
    join(dir, 'none.yaml'),
    '--mqtt',
    'mqtt://127.0.0.1:1',
    '--username',
    'gw',
    '--password',
    'x',
  ]);
  t.is(bad.code, 2);
  t.is(bad.stderr, `parkbench: ${join(dir, 'none.yaml')}: cannot read the bench file: no such file\n`);
});
