import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { Topics } from '../../lib/mqtt-topics.js';
import {
  encodeLinkFrame,
  FrameKind,
  LinkType,
  parseResponse,
  sealCommand,
  Status,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { cableEnd, ptyPairForTest } from '../helpers/pty-pair.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { testNeeding } from '../helpers/requires.js';

// Skipped, with one line naming the package, where socat is not installed (a failure under CI).
const socatTest = testNeeding('socat', test);

const topics = new Topics();

interface BoxFile {
  module_id: number;
  parking_id: number;
  direction: 'entrance' | 'exit';
  mac_address: string;
  parking_key: string;
  parking_key_next: null;
  box_key: string;
  skew_seconds: number;
  min_battery_mv: number;
  mqtt: { url: string; username: string; password: string };
  sim?: Record<string, unknown>;
}

function boxFile(moduleId: number, url = 'mqtt://127.0.0.1:1'): BoxFile {
  return {
    module_id: moduleId,
    parking_id: 7,
    direction: 'entrance',
    mac_address:
      `00:07:80:AA:${(moduleId >> 8).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`.toUpperCase(),
    parking_key: randomBytes(16).toString('hex'),
    parking_key_next: null,
    box_key: randomBytes(16).toString('hex'),
    skew_seconds: 120,
    min_battery_mv: 3300,
    mqtt: { url, username: `box-${moduleId}`, password: 'pw' },
  };
}

function access(box: BoxFile, keyId = 42): Buffer {
  const now = Math.floor(Date.now() / 1000);
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: Buffer.from(box.parking_key, 'hex'),
    keyId,
    scope: box.parking_id,
    body: { notBefore: now - 600, notAfter: now + 600, maxEntries: 3, maxExits: 3, moduleIds: [box.module_id] },
  });
}

async function folder(t: ExecutionContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-sim-cli-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

test('a missing or malformed file, or a bad flag, is one line and exit code 2', async (t) => {
  const directory = await folder(t);
  const missing = await runCli(['sim', '--box', join(directory, 'none.json')]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /^parkbench: .*none\.json: no such file\n$/);
  const malformed = join(directory, 'bad.json');
  await writeFile(malformed, JSON.stringify({ ...boxFile(1), box_key: 'nope' }));
  const bad = await runCli(['sim', '--box', malformed]);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /box_key: must be 32 hex digits/);
  const good = join(directory, 'good.json');
  await writeFile(good, JSON.stringify(boxFile(1)));
  for (const args of [
    ['sim'],
    ['sim', '--box', good, '--fleet', good],
    ['sim', '--box', good, '--drop', '2'],
    ['sim', '--box', good, '--bug', 'nope'],
    ['sim', '--box', good, '--serial', '/dev/x:123'],
  ]) {
    const result = await runCli(args);
    t.is(result.code, 2, args.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  }
});

test('parkbench sim --box answers over MQTT and stops cleanly on SIGTERM', async (t) => {
  const broker = await brokerForTest(t);
  const directory = await folder(t);
  const box = boxFile(9501, broker.url);
  const path = join(directory, 'box.json');
  await writeFile(path, JSON.stringify(box));
  const sim = startCli(t, ['sim', '--box', path, '--state-dir', join(directory, 'state'), '--log-level', 'warn']);
  await sim.waitForLine(/^parkbench sim ready /);
  const operator = await mqtt.connectAsync(broker.url);
  t.teardown(() => operator.endAsync(true));
  const responses: string[] = [];
  operator.on('message', (_topic, payload) => responses.push(payload.toString()));
  await operator.subscribeAsync(topics.box(9501, 'response'), { qos: 1 });
  const command = access(box);
  await operator.publishAsync(topics.box(9501, 'command'), JSON.stringify({ command: command.toString('base64') }), {
    qos: 1,
  });
  await waitFor(() => responses.length === 1, 'the response', 10_000);
  const response = Buffer.from((JSON.parse(responses[0] ?? '{}') as { response: string }).response, 'base64');
  t.true(verifyResponse(response, Buffer.from(box.box_key, 'hex'), command));
  t.is(parseResponse(response).status, Status.OK);
  t.is(await sim.stop('SIGTERM'), 0);
  const stopped = sim.stdout.find((line) => line.startsWith('parkbench sim stopped '));
  t.truthy(stopped);
  t.like(JSON.parse(stopped?.slice('parkbench sim stopped '.length) ?? '{}'), { boxes: 1, commandsAnswered: 1 });
});

test('a fleet file runs every box with its own faults', async (t) => {
  const broker = await brokerForTest(t);
  const directory = await folder(t);
  const boxes = [
    boxFile(9601, broker.url),
    { ...boxFile(9602, broker.url), sim: { jam: true } },
    boxFile(9603, broker.url),
  ];
  const path = join(directory, 'fleet.json');
  await writeFile(path, JSON.stringify(boxes));
  const sim = startCli(t, ['sim', '--fleet', path, '--memory-state', '--log-level', 'warn']);
  const ready = await sim.waitForLine(/^parkbench sim ready /);
  t.deepEqual(
    (JSON.parse(ready.slice('parkbench sim ready '.length)) as { boxes: number[] }).boxes,
    [9601, 9602, 9603],
  );
  const operator = await mqtt.connectAsync(broker.url);
  t.teardown(() => operator.endAsync(true));
  const statuses = new Map<string, number>();
  operator.on('message', (topic, payload) => {
    const message = JSON.parse(payload.toString()) as { response: string };
    statuses.set(topic, parseResponse(Buffer.from(message.response, 'base64')).status);
  });
  await operator.subscribeAsync(topics.allBoxes('response'), { qos: 1 });
  for (const box of boxes)
    await operator.publishAsync(
      topics.box(box.module_id, 'command'),
      JSON.stringify({ command: access(box).toString('base64') }),
      { qos: 1 },
    );
  await waitFor(() => statuses.size === 3, 'three responses', 10_000);
  t.is(statuses.get(topics.box(9601, 'response')), Status.OK);
  t.is(statuses.get(topics.box(9602, 'response')), Status.BARRIER_FAULT);
  t.is(statuses.get(topics.box(9603, 'response')), Status.OK);
  t.is(await sim.stop('SIGINT'), 0);
});

socatTest('parkbench sim --serial alone speaks the serial link on a pty, and no MQTT', async (t) => {
  const pair = await ptyPairForTest(t);
  const directory = await folder(t);
  const box = boxFile(9701);
  const path = join(directory, 'box.json');
  await writeFile(path, JSON.stringify(box));
  const { port, frames } = await cableEnd(t, pair.b);
  const sim = startCli(t, [
    'sim',
    '--box',
    path,
    '--serial',
    `${pair.a}:115200`,
    '--memory-state',
    '--log-level',
    'warn',
  ]);
  const ready = await sim.waitForLine(/^parkbench sim ready /);
  t.deepEqual((JSON.parse(ready.slice('parkbench sim ready '.length)) as { links: string[] }).links, ['serial']);
  const command = access(box);
  port.write(encodeLinkFrame(LinkType.COMMAND, command));
  await waitFor(() => frames.some((frame) => frame.type === LinkType.RESPONSE), 'the response', 10_000);
  const response = frames.find((frame) => frame.type === LinkType.RESPONSE)?.payload ?? Buffer.alloc(0);
  t.true(verifyResponse(response, Buffer.from(box.box_key, 'hex'), command));
  t.is(parseResponse(response).status, Status.OK);
  t.is(await sim.stop(), 0);
});
