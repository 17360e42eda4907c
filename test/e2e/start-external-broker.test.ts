// `parkbench start --mqtt-url`: the bench on an external
// mosquitto. The first start writes the bench's accounts for mosquitto and
// stops, saying the broker does not have them; once mosquitto reloaded them,
// the next start runs with the same passwords and `parkbench app` plays a
// whole session through mosquitto.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import avaTest from 'ava';
import { hashMqttPassword } from '../../api/auth/mqtt-password.js';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { appSessionArgs } from '../../lib/app-session-args.js';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';

const test = testNeeding('mosquitto', avaTest);
const API = { username: 'parkbench-api', password: 'api-password-0123' };

test('start --mqtt-url: the first start writes the accounts and stops with what to do; after a reload the bench runs a whole session through mosquitto', async (t) => {
  t.timeout(180_000);
  const dir = tempDir(t, 'parkbench-start-external-');
  const dataDir = join(dir, 'data');
  const aclDir = join(dir, 'mosquitto');
  // A mosquitto that knows only the API's account so far.
  mkdirSync(aclDir);
  writeFileSync(join(aclDir, 'passwords'), `${API.username}:${hashMqttPassword(API.password)}\n`, { mode: 0o600 });
  writeFileSync(join(aclDir, 'acl'), `user ${API.username}\ntopic readwrite #\n`);
  const broker = await startMosquitto(t, aclDir, API);
  const args = async (): Promise<string[]> => [
    'start',
    ...['--data-dir', dataDir, '--port', String(await freePort())],
    ...['--mqtt-url', broker.url, '--mqtt-username', API.username, '--mqtt-password', API.password],
    ...['--mqtt-acl-out', aclDir, '--speed', '20'],
  ];

  const first = await runCli(await args(), { env: { LOG_LEVEL: 'warn' } });
  t.is(first.code, 2, first.stderr);
  t.regex(
    first.stderr,
    new RegExp(
      `the MQTT broker at ${broker.url} refused op-demo-app: it does not have the bench's accounts yet; load the files written to ${aclDir}`,
    ),
  );
  const passwords = readFileSync(join(aclDir, 'passwords'), 'utf8');
  for (const username of [API.username, 'op-demo-app', 'box-9101', 'box-9102'])
    t.regex(passwords, new RegExp(`^${username}:\\$7\\$`, 'm'), `${username} in the password file`);

  broker.reload();
  const bench = startCli(t, await args(), { LOG_LEVEL: 'warn' });
  const line = await bench.waitForLine(/^parkbench ready /, 60_000);
  const ready = JSON.parse(line.slice('parkbench ready '.length)) as ReadyInfo;
  t.is(ready.mqtt_url, broker.url);
  // The API's own line is hashed anew at each export (a fresh salt); the bench's accounts keep theirs.
  const benchLines = (text: string) => text.split('\n').filter((line) => !line.startsWith(`${API.username}:`));
  t.deepEqual(
    benchLines(readFileSync(join(aclDir, 'passwords'), 'utf8')),
    benchLines(passwords),
    "the bench's accounts keep the passwords the first start wrote",
  );

  const app = await runCli(appSessionArgs(ready));
  t.is(app.code, 0, `${app.stdout}\n${app.stderr}`);
  for (const step of ['entrance: send the smart key', 'session active', 'exit: send the smart key', 'session finished'])
    t.true(app.stdout.includes(step), `the output shows "${step}"`);
  t.is(await bench.stop('SIGINT'), 0);
});
