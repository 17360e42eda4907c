// The box-log stream of the dashboard benchmark, in its own process: the
// fleet file's boxes connect with their own accounts and publish verified
// responses (made beforehand) at a steady total rate, QoS 1, for a while.
//   --fleet FILE --rate N (per second, all boxes together) --seconds S
// Prints "ready" once connected (the responses made), starts on SIGUSR2, then, when done,
// "result {json}" with what it published.
import mqtt, { type MqttClient } from 'mqtt';
import { disableNagle } from '../../lib/resilient-mqtt.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { loadFleetFile } from '../../simulator/fleet-file.js';
import { makeVerifiedResponses } from '../../simulator/verified-responses.js';

const topics = new Topics();
const url = argument('--url') ?? 'mqtt://127.0.0.1:1883';
const rate = Number(argument('--rate') ?? 1000);
const seconds = Number(argument('--seconds') ?? 15);
const members = await loadFleetFile(argument('--fleet') ?? '');
/** Publishes go out every TICK_MS, rate / (1000 / TICK_MS) at a time, round robin over the boxes. */
const TICK_MS = 50;
const perBox = Math.ceil((rate * seconds) / members.length) + 1;

const streams = await Promise.all(
  members.map(async (member) => ({
    topic: topics.box(member.provisioning.moduleId, 'response'),
    payloads: (await makeVerifiedResponses(member.provisioning, perBox)).map((made) => made.payload),
    next: 0,
  })),
);
const clients: MqttClient[] = [];
for (const member of members) {
  const account = member.provisioning.mqtt;
  if (account === null) throw new Error(`box ${member.provisioning.moduleId} has no MQTT account`);
  const client = await mqtt.connectAsync(url, {
    clientId: `dashboard-${account.username}`,
    username: account.username,
    password: account.password,
    reconnectPeriod: 0,
  });
  disableNagle(client);
  clients.push(client);
}
process.stdout.write('ready\n');
// The benchmark starts the stream once the page has rendered (SIGUSR2: the worker's stdin is closed).
await new Promise<void>((resolve) => process.once('SIGUSR2', () => resolve()));

const started = performance.now();
let published = 0;
let acknowledged = 0;
let turn = 0;
const pending: Promise<unknown>[] = [];
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    const elapsed = performance.now() - started;
    if (elapsed >= seconds * 1000) {
      clearInterval(timer);
      resolve();
      return;
    }
    // Catch up to the rate by the clock, so a late tick does not lower it.
    const due = Math.floor((elapsed / 1000) * rate) - published;
    for (let sent = 0; sent < due; sent += 1) {
      const index = turn++ % streams.length;
      const stream = streams[index];
      const client = clients[index];
      if (stream === undefined || client === undefined) continue;
      const payload = stream.payloads[stream.next++];
      if (payload === undefined) continue;
      published += 1;
      pending.push(client.publishAsync(stream.topic, payload, { qos: 1 }).then(() => (acknowledged += 1)));
    }
  }, TICK_MS);
});
await Promise.all(pending);
const wallSeconds = (performance.now() - started) / 1000;
process.stdout.write(`result ${JSON.stringify({ published, acknowledged, seconds: wallSeconds })}\n`);
await Promise.all(clients.map((client) => client.endAsync(true)));
process.exit(0);

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
