// A gateway killed between publishing its queued responses and the broker's
// PUBACKs loses none of them. Real parts: `parkbench
// gateway` and `parkbench sim` as child processes on a socat pty pair, real
// aedes brokers on one port (down, then back), and a SIGKILL.
//
// The window is made real by the broker: when it comes back it holds every
// response publish in authorizePublish, so no PUBACK reaches the gateway;
// the gateway is killed while they are held, and that broker goes without
// ever taking them (the worst case). A third broker, then a restarted
// gateway on the same queue file: every response must arrive (duplicates
// are fine, ingestion deduplicates them).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import avaTest from 'ava';
import type { IPublishPacket as PublishPacket } from 'mqtt-packet';
import mqtt from 'mqtt';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { readQueueFile } from '../../gateway/disk-queue.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { tempDir } from '../helpers/api-app.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { waitFor } from '../helpers/wait.js';
import { testNeeding } from '../helpers/requires.js';

// Skipped, with one line naming the package, where socat is not installed (a failure under CI).
const test = testNeeding('socat', avaTest);

const topics = new Topics();
const MODULE_ID = 9101;
const RESPONSES = 10;

/** Request ids of the response messages in these publishes. */
function requestIds(packets: readonly PublishPacket[]): Set<string> {
  return new Set(
    packets.map(
      (packet) => (JSON.parse(packet.payload.toString()) as { context: { request_id: string } }).context.request_id,
    ),
  );
}

async function queuedInFile(path: string): Promise<number> {
  return (await readQueueFile(path)).publishes.length;
}

test('responses queued while the broker was down survive a SIGKILL between their publish and the PUBACK', async (t) => {
  const dir = tempDir(t, 'parkbench-gw-crash-');
  const parkingKey = randomBytes(16);
  const boxFile = join(dir, 'box.json');
  writeFileSync(
    boxFile,
    JSON.stringify({
      module_id: MODULE_ID,
      parking_id: 7,
      direction: 'entrance',
      mac_address: '00:07:80:AA:BB:01',
      parking_key: parkingKey.toString('hex'),
      parking_key_next: null,
      box_key: randomBytes(16).toString('hex'),
      skew_seconds: 120,
      min_battery_mv: 3_300,
      mqtt: null,
    }),
  );
  const queueFile = join(dir, 'queue.json');
  const responseTopic = topics.box(MODULE_ID, 'response');
  const brokers: TestBroker[] = [];
  t.teardown(async () => {
    for (const broker of brokers) await broker.close();
  });

  // 1. Broker up, box on one end of the cable, gateway on the other.
  const first = await startBroker();
  brokers.push(first);
  const { port } = first;
  const pair = await ptyPairForTest(t);
  const sim = startCli(t, ['sim', '--box', boxFile, '--serial', pair.a, '--memory-state', '--log-level', 'warn']);
  await sim.waitForLine(/^parkbench sim ready /);
  const gatewayArgs = [
    'gateway',
    '--mqtt',
    first.url,
    '--username',
    'gw-crash',
    '--password',
    'x',
    '--serial',
    pair.b,
    '--answer-ms',
    '30000',
    '--queue-file',
    queueFile,
    '--log-level',
    'warn',
  ];
  const gateway = startCli(t, gatewayArgs);
  await gateway.waitForLine(/^parkbench gateway ready /);
  const operator = await mqtt.connectAsync(first.url, { reconnectPeriod: 0 });
  const online = new Promise<void>((resolve) =>
    operator.on(
      'message',
      (topic, payload) =>
        topic === topics.box(MODULE_ID, 'availability') && payload.toString() === 'online' && resolve(),
    ),
  );
  await operator.subscribeAsync(topics.box(MODULE_ID, 'availability'), { qos: 1 });
  await online; // the gateway reached the box and subscribed to its commands

  // 2. The box stops answering for a while; the gateway takes every command.
  sim.child.kill('SIGSTOP');
  let commandsTaken = 0;
  // The gateway's PUBACKs (it subscribes to box commands only; aedes may not pass the packet).
  first.broker.on('ack', (_packet, client) => {
    if (client.id.startsWith('gw-crash-')) commandsTaken++;
  });
  const now = Math.floor(Date.now() / 1000);
  for (let index = 0; index < RESPONSES; index++) {
    const command = sealCommand({
      kind: FrameKind.ACCESS,
      key: parkingKey,
      keyId: 100 + index,
      scope: 7,
      body: { notBefore: now - 60, notAfter: now + 3_600, maxEntries: 9, maxExits: 9, moduleIds: [MODULE_ID] },
    });
    await operator.publishAsync(
      topics.box(MODULE_ID, 'command'),
      JSON.stringify({ command: command.toString('base64'), context: { request_id: `r-${index}` } }),
      { qos: 1 },
    );
  }
  await waitFor(() => commandsTaken === RESPONSES, 'the gateway to take every command', 10_000);
  await operator.endAsync(true);

  // 3. The broker goes down; the box answers; the gateway queues every response on disk.
  await first.close();
  sim.child.kill('SIGCONT');
  await waitFor(
    async () => (await queuedInFile(queueFile)) === RESPONSES,
    `${RESPONSES} responses in the queue file`,
    20_000,
  );

  // 4. The broker comes back but holds every response publish: no PUBACK.
  const held: PublishPacket[] = [];
  const holding = await startBroker(
    {
      authorizePublish: (_client, packet, callback) =>
        packet.topic === responseTopic ? held.push(packet) : callback(null),
    },
    port,
  );
  brokers.push(holding);
  await waitFor(
    () => requestIds(held).size === RESPONSES,
    'the gateway to publish its whole queue to the broker that came back',
    20_000,
  );
  // A slow broker's PUBACK delay, on the real clock (the gateway's, in
  // another process, cannot be stepped): the gateway does all it does
  // before a PUBACK comes. aedes handles nothing more of this client while
  // the publishes are held, so there is no later message to wait for.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const inFlight = requestIds(held).size;

  // 5. SIGKILL in the window; that broker goes without ever taking them.
  t.is(await gateway.stop('SIGKILL'), 'SIGKILL');
  await holding.close();

  // 6. A broker that takes everything, the gateway restarted on the same queue file.
  const last = await startBroker({}, port);
  brokers.push(last);
  const delivered: PublishPacket[] = [];
  last.broker.on('publish', (packet, client) => {
    if (client !== null && packet.topic === responseTopic) delivered.push(packet);
  });
  const restarted = startCli(t, gatewayArgs);
  await restarted.waitForLine(/^parkbench gateway ready /);
  await waitFor(
    () => requestIds(delivered).size === RESPONSES,
    `${RESPONSES} responses delivered after the restart`,
    5_000,
  ).catch(() => undefined);
  t.log(
    `in flight at the SIGKILL: ${inFlight}; delivered after the restart: ${requestIds(delivered).size} of ${RESPONSES} (${delivered.length} publishes)`,
  );
  t.is(requestIds(delivered).size, RESPONSES, 'every response delivered after the restart');
  await waitFor(
    async () => (await queuedInFile(queueFile)) === 0,
    'the queue file emptied once the broker took them all',
    5_000,
  );
});
