// One side of the ingestion benchmark, in its own process (so neither the
// broker's nor the API's event loop is shared with the publishers).
//   --mode bare  --url U --count N: two plain clients on a bare broker, one
//                publishing N messages at QoS 1, one subscribed at QoS 1;
//                rate = messages received per second.
//   --mode boxes --url U --fleet FILE --per-box K: every box of the fleet
//                file connects with its own account and publishes K verified
//                responses (made beforehand) at QoS 1, as fast as the broker
//                acknowledges them; the embedded broker acknowledges only
//                after the box log is committed, so rate = stored per second.
// Prints one line: "result {json}".
import mqtt, { type MqttClient } from 'mqtt';
import { disableNagle } from '../../lib/resilient-mqtt.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { loadFleetFile } from '../../simulator/fleet-file.js';
import { makeVerifiedResponses } from '../../simulator/verified-responses.js';

const topics = new Topics();
/** QoS 1 publishes in flight per client: enough to keep the pipe full. */
const WINDOW = Number(argument('--window') ?? 32);
const mode = argument('--mode');
const url = argument('--url') ?? 'mqtt://127.0.0.1:1883';

/** Publishes every payload on `topic` with at most WINDOW unacknowledged. */
async function publishAll(client: MqttClient, topic: string, payloads: readonly string[]): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < payloads.length) await client.publishAsync(topic, payloads[next++] ?? '', { qos: 1 });
  };
  await Promise.all(Array.from({ length: WINDOW }, lane));
}

async function connect(options: mqtt.IClientOptions): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 30_000, ...options });
  disableNagle(client);
  return client;
}

if (mode === 'bare') {
  const count = Number(argument('--count') ?? 50_000);
  const payload = argument('--payload') ?? 'x'.repeat(400);
  const topic = topics.box(1, 'response');
  const subscriber = await connect({ clientId: 'bench-subscriber' });
  const publisher = await connect({ clientId: 'bench-publisher' });
  let received = 0;
  const all = new Promise<void>((resolve) => {
    subscriber.on('message', () => {
      if (++received === count) resolve();
    });
  });
  await subscriber.subscribeAsync(topic, { qos: 1 });
  const started = performance.now();
  await publishAll(
    publisher,
    topic,
    Array.from({ length: count }, () => payload),
  );
  await all;
  const seconds = (performance.now() - started) / 1000;
  report({ messages: count, seconds, rate: count / seconds });
  await Promise.all([publisher.endAsync(true), subscriber.endAsync(true)]);
} else if (mode === 'boxes') {
  const perBox = Number(argument('--per-box') ?? 250);
  const members = await loadFleetFile(argument('--fleet') ?? '');
  const madeStarted = performance.now();
  const streams = await Promise.all(
    members.map(async (member) => ({ member, responses: await makeVerifiedResponses(member.provisioning, perBox) })),
  );
  const madeMs = performance.now() - madeStarted;
  const clients: MqttClient[] = [];
  for (let index = 0; index < members.length; index += 50) {
    const batch = members.slice(index, index + 50).map((member) => {
      const account = member.provisioning.mqtt;
      if (account === null) throw new Error(`box ${member.provisioning.moduleId} has no MQTT account`);
      return connect({ clientId: `bench-${account.username}`, username: account.username, password: account.password });
    });
    clients.push(...(await Promise.all(batch)));
  }
  // For a caller that times the stream itself (perf:processes: stored, not acknowledged).
  process.stdout.write('publishing\n');
  const started = performance.now();
  await Promise.all(
    streams.map((stream, index) =>
      publishAll(
        clients[index] as MqttClient,
        topics.box(stream.member.provisioning.moduleId, 'response'),
        stream.responses.map((response) => response.payload),
      ),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const messages = members.length * perBox;
  report({ boxes: members.length, messages, seconds, rate: messages / seconds, madeMs });
  await Promise.all(clients.map((client) => client.endAsync(true)));
} else {
  throw new Error('--mode bare|boxes');
}
process.exit(0);

function report(result: object): void {
  process.stdout.write(`result ${JSON.stringify(result)}\n`);
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
