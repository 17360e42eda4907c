import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { Topics } from '../../lib/mqtt-topics.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { brokerFixture } from '../helpers/mqtt-fixtures.js';
import { testNeeding } from '../helpers/requires.js';

// Skipped, with one line naming the package, where mosquitto is not installed (a failure under CI).
const mosquittoTest = testNeeding('mosquitto', test);

const topics = new Topics();

test('mqtt-client add prints the account once; a taken name exits 1, a bad role 2', async (t) => {
  const fixture = await brokerFixture(t);
  const env = { DATABASE_PATH: fixture.databasePath };
  const added = await runCli(['admin', 'mqtt-client', 'add', '--name', 'Bench 1', '--role', 'gateway', '--json'], {
    env,
  });
  t.is(added.code, 0, added.stderr);
  const account = JSON.parse(added.stdout) as Record<string, unknown>;
  t.deepEqual(Object.keys(account).slice(0, 4), ['name', 'role', 'mqtt_username', 'mqtt_password']);
  t.like(account, { name: 'Bench 1', role: 'gateway', mqtt_username: 'gw-bench-1' });
  t.regex(String(account.mqtt_password), /^[A-Za-z0-9_-]{32}$/);
  const again = await runCli(['admin', 'mqtt-client', 'add', '--name', 'bench 1', '--role', 'gateway'], { env });
  t.is(again.code, 1);
  t.regex(again.stderr, /gw-bench-1 already exists/);
  const bad = await runCli(['admin', 'mqtt-client', 'add', '--name', 'x', '--role', 'admin'], { env });
  t.is(bad.code, 2);
  t.is(bad.stderr.trim().split('\n').length, 1);
});

test('fleet provision adds boxes half entrance, half exit, in one file; past 32 a parking it needs --create-parkings', async (t) => {
  const fixture = await brokerFixture(t, []);
  const env = { DATABASE_PATH: fixture.databasePath, MQTT_URL: 'mqtt://127.0.0.1:1883' };
  const out = join(fixture.directory, 'fleet.json');
  const small = await runCli(
    ['admin', 'fleet', 'provision', '--parking', String(fixture.parkingId), '--count', '4', '--out', out, '--json'],
    { env },
  );
  t.is(small.code, 0, small.stderr);
  const fleet = JSON.parse(await readFile(out, 'utf8')) as {
    module_id: number;
    direction: string;
    parking_id: number;
    mqtt: { username: string };
  }[];
  t.is(fleet.length, 4);
  t.deepEqual(
    fleet.map((box) => box.direction),
    ['entrance', 'exit', 'entrance', 'exit'],
  );
  t.deepEqual(
    fleet.map((box) => box.mqtt.username),
    fleet.map((box) => `box-${box.module_id}`),
  );
  const tooMany = await runCli(
    ['admin', 'fleet', 'provision', '--parking', String(fixture.parkingId), '--count', '40', '--out', out],
    { env },
  );
  t.is(tooMany.code, 1);
  t.regex(tooMany.stderr, /room for 28 more boxes/);
  const spread = await runCli(
    [
      'admin',
      'fleet',
      'provision',
      '--parking',
      String(fixture.parkingId),
      '--count',
      '40',
      '--out',
      out,
      '--create-parkings',
      '--json',
    ],
    { env },
  );
  t.is(spread.code, 0, spread.stderr);
  const result = JSON.parse(spread.stdout) as { parking_ids: number[]; count: number };
  t.is(result.count, 40);
  t.is(result.parking_ids.length, 2);
  const bad = await runCli(
    ['admin', 'fleet', 'provision', '--parking', String(fixture.parkingId), '--count', '0', '--out', out],
    { env },
  );
  t.is(bad.code, 2);
});

mosquittoTest('mqtt-acl --format mosquitto: a real mosquitto enforces the same accounts and rules', async (t) => {
  const fixture = await brokerFixture(t);
  const env = { DATABASE_PATH: fixture.databasePath, MQTT_USERNAME: 'parkbench-api', MQTT_PASSWORD: 'api-password' };
  const out = join(fixture.directory, 'mosquitto');
  const exported = await runCli(['admin', 'mqtt-acl', '--format', 'mosquitto', '--out', out, '--json'], { env });
  t.is(exported.code, 0, exported.stderr);
  t.like(JSON.parse(exported.stdout), { format: 'mosquitto', accounts: 5 });
  const mosquitto = await startMosquitto(t, out, fixture.operator);
  const connect = async (username: string, password: string) => {
    const client = await mqtt.connectAsync(mosquitto.url, {
      username,
      password,
      reconnectPeriod: 0,
      connectTimeout: 2_000,
    });
    t.teardown(() => client.endAsync(true));
    return client;
  };
  const operator = await connect(fixture.operator.username, fixture.operator.password);
  const seen: string[] = [];
  operator.on('message', (topic) => seen.push(topic));
  await operator.subscribeAsync(`${topics.prefix}/#`, { qos: 1 });
  const box = await connect('box-9101', fixture.boxes.get(9101) ?? '');
  await box.publishAsync(topics.box(9102, 'response'), '{"forged":true}', { qos: 1 });
  await box.publishAsync(topics.box(9101, 'response'), '{}', { qos: 1 });
  await waitFor(() => seen.includes(topics.box(9101, 'response')), 'the box own response delivered');
  t.false(seen.includes(topics.box(9102, 'response')), "mosquitto dropped the box's publish for another box");
  const api = await connect('parkbench-api', 'api-password');
  t.true(api.connected);
  await t.throwsAsync(connect('box-9101', 'wrong-password'));
});
