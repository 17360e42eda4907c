// One side of the fleet benchmark, in its own process so its memory is its
// own: `--mode bare` connects bare MQTT clients, `--mode sim` a fleet of
// simulated boxes, then sends each box one command and times the answers.
// Prints one line: "result {json}".
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { Simulation } from '../../simulator/simulation.js';
import type { FleetMember } from '../../simulator/fleet-file.js';
import { percentile } from './processes.js';

const mode = argument('--mode');
const url = argument('--url') ?? 'mqtt://127.0.0.1:1883';
const count = Number(argument('--count') ?? 1_000);
const topics = new Topics();
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function residentMb(): number {
  gc();
  return process.memoryUsage().rss / 2 ** 20;
}

if (mode === 'bare') {
  const before = residentMb();
  const started = performance.now();
  const clients: MqttClient[] = [];
  for (let index = 0; index < count; index += 200) {
    const batch = Array.from({ length: Math.min(200, count - index) }, async (_, offset) => {
      const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, clientId: `bare-${index + offset}` });
      await client.subscribeAsync([topics.box(index + offset, 'command'), topics.box(index + offset, 'sim/set')], {
        qos: 1,
      });
      clients.push(client);
    });
    await Promise.all(batch);
  }
  const connectMs = performance.now() - started;
  const rssMb = residentMb();
  report({
    connectMs,
    rssMb,
    perClientKb: ((rssMb - before) * 1024) / count,
    answered: 0,
    publishMs: 0,
    lastAnswerMs: 0,
    p50: 0,
    p90: 0,
    p99: 0,
    max: 0,
  });
  await Promise.all(clients.map((client) => client.endAsync(true)));
} else if (mode === 'sim') {
  const stateDir = await mkdtemp(join(tmpdir(), 'pb-fleet-bench-'));
  const parkingKey = randomBytes(16);
  const members: FleetMember[] = Array.from({ length: count }, (_, index) => ({
    provisioning: {
      moduleId: 100_000 + index,
      parkingId: 7,
      direction: index % 2 === 0 ? 'entrance' : 'exit',
      macAddress: `02:00:00:${hex((index >> 16) & 0xff)}:${hex((index >> 8) & 0xff)}:${hex(index & 0xff)}`,
      parkingKey,
      parkingKeyNext: null,
      boxKey: randomBytes(16),
      skewSeconds: 120,
      minBatteryMv: 3_300,
      mqtt: { url, username: `box-${100_000 + index}`, password: 'bench' },
    },
    settings: {},
  }));
  const before = residentMb();
  const started = performance.now();
  const simulation = await Simulation.start({
    members,
    clock: systemClock,
    mqtt: { topics },
    stateDir,
    carPassDelayMs: 3_000,
    connectConcurrency: 200,
  });
  const connectMs = performance.now() - started;
  const rssConnected = residentMb();

  const operator = await mqtt.connectAsync(url, { clientId: 'bench-operator' });
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let lastAnswerAt = 0;
  const allAnswered = new Promise<void>((resolve) => {
    operator.on('message', (topic) => {
      const moduleId = topics.parseBoxTopic(topic)?.moduleId ?? -1;
      const sent = sentAt.get(moduleId);
      if (sent === undefined) return;
      sentAt.delete(moduleId);
      lastAnswerAt = performance.now();
      latencies.push(lastAnswerAt - sent);
      if (latencies.length === count) resolve();
    });
  });
  await operator.subscribeAsync(topics.allBoxes('response'), { qos: 1 });
  const now = Math.floor(Date.now() / 1000);
  const commands = members.map((member) =>
    sealCommand({
      kind: FrameKind.ACCESS,
      key: parkingKey,
      keyId: 1,
      scope: 7,
      body: {
        notBefore: now - 60,
        notAfter: now + 3_600,
        maxEntries: 5,
        maxExits: 5,
        moduleIds: [member.provisioning.moduleId],
      },
    }).toString('base64'),
  );
  const firstPublish = performance.now();
  await Promise.all(
    members.map((member, index) => {
      sentAt.set(member.provisioning.moduleId, performance.now());
      return operator.publishAsync(
        topics.box(member.provisioning.moduleId, 'command'),
        JSON.stringify({ command: commands[index] }),
        { qos: 1 },
      );
    }),
  );
  const publishMs = performance.now() - firstPublish;
  await Promise.race([allAnswered, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  const rssMb = Math.max(rssConnected, residentMb());
  latencies.sort((a, b) => a - b);
  report({
    connectMs,
    rssMb,
    perClientKb: ((rssConnected - before) * 1024) / count,
    answered: latencies.length,
    publishMs,
    lastAnswerMs: lastAnswerAt === 0 ? Number.NaN : lastAnswerAt - firstPublish,
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1) ?? Number.NaN,
  });
  await operator.endAsync(true);
  await simulation.stop();
  await rm(stateDir, { recursive: true, force: true });
} else {
  throw new Error('--mode bare|sim');
}
process.exit(0);

function report(result: object): void {
  process.stdout.write(`result ${JSON.stringify(result)}\n`);
}

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0').toUpperCase();
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
