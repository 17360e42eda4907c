// `parkbench start` simulates the demo parking's simulated boxes (its own two
// and one added with `admin box add --simulated`), never a box added as real:
// a real box of the demo parking is answered by its gateway or its own link,
// and a twin in the simulator would answer the same command a second time.
// Real processes on a temporary data folder: the demo and the two boxes made
// by `admin` on the bench's database, then one `start`.
import { join } from 'node:path';
import test from 'ava';
import mqtt from 'mqtt';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

interface Box {
  module_id: number;
  simulated: boolean;
  availability: string;
}

/** Whether the broker takes this login (a box's MQTT account). */
async function logsIn(url: string, username: string, password: string): Promise<boolean> {
  try {
    const client = await mqtt.connectAsync(url, { username, password, reconnectPeriod: 0, connectTimeout: 10_000 });
    await client.endAsync();
    return true;
  } catch {
    return false;
  }
}

test('start simulates the demo and --simulated boxes, not a box added as real; the operator API says which is which', async (t) => {
  t.timeout(150_000);
  const dataDir = tempDir(t, 'parkbench-start-simulated-');
  const env = {
    DATABASE_PATH: join(dataDir, 'parkbench.sqlite'),
    DATABASE_URL: '',
    MQTT_URL: '',
    SCRYPT_LOG2_N: '10',
    LOG_LEVEL: 'warn',
  };
  const admin = async <T>(...args: string[]): Promise<T> => {
    const result = await runCli(['admin', ...args, '--json'], { env });
    if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as T;
  };
  const demo = await admin<{ parking_id: number }>('demo');
  const box = (moduleId: number, mac: string, ...more: string[]) =>
    admin<{ mqtt_username: string; mqtt_password: string }>(
      'box',
      'add',
      ...['--parking', String(demo.parking_id), '--module-id', String(moduleId), '--mac', mac],
      ...['--direction', 'entrance', ...more],
    );
  const real = await box(4242, '00:07:80:AA:BB:01');
  const simulated = await box(4243, '00:07:80:AA:BB:02', '--simulated');
  const { token } = await admin<{ token: string }>('operator', 'add', '--name', 'watcher');

  const bench = startCli(
    t,
    ['start', '--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(await freePort())],
    env,
  );
  const ready = JSON.parse(
    (await bench.waitForLine(/^parkbench ready /, 90_000)).slice('parkbench ready '.length),
  ) as ReadyInfo;
  t.deepEqual(
    ready.boxes.map(({ module_id, simulated: isSimulated }) => ({ module_id, simulated: isSimulated })),
    [
      { module_id: 4242, simulated: false },
      { module_id: 4243, simulated: true },
      { module_id: 9101, simulated: true },
      { module_id: 9102, simulated: true },
    ],
  );
  t.true(
    bench.stdout.includes(
      `  parking      ${demo.parking_id}, boxes 4243 (entrance), 9101 (entrance), 9102 (exit), simulated on MQTT; real boxes 4242 (entrance), not simulated`,
    ),
    bench.stdout.join('\n'),
  );

  // The simulated boxes come online through the API; start gave them fresh MQTT passwords.
  const boxes = async (): Promise<Box[]> => {
    const response = await fetch(`${ready.api_url}/api/operator/parkings`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const parkings = (await response.json()) as { id: number; boxes: Box[] }[];
    return parkings.find((parking) => parking.id === demo.parking_id)?.boxes ?? [];
  };
  await waitFor(
    async () => (await boxes()).filter((entry) => entry.simulated && entry.availability === 'online').length === 3,
    'the three simulated boxes online',
    60_000,
  );
  const seen = await boxes();
  t.deepEqual(
    seen.map(({ module_id, simulated: isSimulated, availability }) => ({
      module_id,
      simulated: isSimulated,
      availability,
    })),
    [
      { module_id: 4242, simulated: false, availability: 'unknown' },
      { module_id: 4243, simulated: true, availability: 'online' },
      { module_id: 9101, simulated: true, availability: 'online' },
      { module_id: 9102, simulated: true, availability: 'online' },
    ],
    'the real box never came online: nothing plays it',
  );
  // start never provisioned the real box: the password `box add` gave it still logs in; the simulated one's was replaced.
  t.true(await logsIn(ready.mqtt_url, real.mqtt_username, real.mqtt_password), 'the real box keeps its account');
  t.false(
    await logsIn(ready.mqtt_url, simulated.mqtt_username, simulated.mqtt_password),
    "the simulated box's was replaced",
  );
  t.is(await bench.stop('SIGTERM'), 0);
});
