// ResilientMqttClient and a message its broker refuses for good: mosquitto
// with `max_packet_size` closes the connection on a publish over it (MQTT
// 3.1.1: the socket; MQTT 5: DISCONNECT 0x95 Packet too large), aedes closes
// it on a publish its authorizer refuses, and mosquitto's ACL answers an MQTT
// 5 publish with PUBACK 0x87 Not authorized. Each time the message is
// dropped after MAX_PUBLISH_TRIES tries, counted and logged once; the
// messages behind it go, and nothing is sent again forever.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import avaTest, { type ExecutionContext } from 'ava';
import mqtt from 'mqtt';
import { hashMqttPassword } from '../../api/auth/mqtt-password.js';
import { FakeClock } from '../../lib/fake-clock.js';
import type { Logger } from '../../lib/logger.js';
import { MAX_PUBLISH_TRIES, ResilientMqttClient } from '../../lib/resilient-mqtt.js';
import { startBroker } from '../helpers/broker.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { testNeeding } from '../helpers/requires.js';
import { waitFor } from '../helpers/wait.js';

const test = testNeeding('mosquitto', avaTest);

const ACCOUNT = { username: 'bench', password: 'bench-password-0123' };
const MAX_PACKET_BYTES = 1024;

/** mosquitto with one account that may write t/ok/# and read everything, and `settings`. */
async function mosquitto(t: ExecutionContext, settings: readonly string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'parkbench-refusals-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'passwords'), `${ACCOUNT.username}:${hashMqttPassword(ACCOUNT.password)}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'acl'), `user ${ACCOUNT.username}\ntopic write t/ok/#\ntopic read #\n`);
  return (await startMosquitto(t, dir, ACCOUNT, settings)).url;
}

/** A logger keeping its lines. */
function recordingLogger(): { logger: Logger; lines: { level: string; fields: object; message?: string }[] } {
  const lines: { level: string; fields: object; message?: string }[] = [];
  const at =
    (level: string) =>
    (fields: object, message?: string): void => {
      lines.push({ level, fields, ...(message === undefined ? {} : { message }) });
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return { logger, lines };
}

/** A plain subscriber to t/#: the payloads the broker routed. */
async function subscriber(t: ExecutionContext, url: string, login: object = {}): Promise<string[]> {
  const received: string[] = [];
  const client = await mqtt.connectAsync(url, { ...login, reconnectPeriod: 0 });
  t.teardown(() => client.endAsync(true));
  client.on('message', (_topic, payload) => received.push(payload.length > 100 ? 'the large one' : payload.toString()));
  await client.subscribeAsync('t/#', { qos: 1 });
  return received;
}

async function resilient(
  t: ExecutionContext,
  url: string,
  protocolVersion: 4 | 5,
  login: object = ACCOUNT,
): Promise<{ client: ResilientMqttClient; clock: FakeClock; lines: ReturnType<typeof recordingLogger>['lines'] }> {
  const clock = new FakeClock();
  const { logger, lines } = recordingLogger();
  const client = new ResilientMqttClient({
    url,
    ...login,
    clientId: `refusals-${protocolVersion}-${process.pid}`,
    clock,
    protocolVersion,
    logger,
    backoff: { initialMs: 100, maxMs: 100, factor: 1, jitter: 0 },
  });
  t.teardown(() => client.stop());
  await client.start();
  return { client, clock, lines };
}

/** Steps the clock (reconnections) until `condition`, with a real-time bound. */
async function until(clock: FakeClock, condition: () => boolean, what: string): Promise<void> {
  await waitFor(
    async () => {
      await clock.advanceAsync(100);
      return condition();
    },
    what,
    20_000,
  );
}

function droppedLines(lines: ReturnType<typeof recordingLogger>['lines']): number {
  return lines.filter((line) => line.message?.startsWith('publish dropped') === true).length;
}

for (const protocolVersion of [4, 5] as const) {
  test(`MQTT ${protocolVersion === 4 ? '3.1.1' : '5'}: a message over mosquitto's max_packet_size (it closes the connection) is dropped after ${MAX_PUBLISH_TRIES} tries, counted and logged once; those behind it go`, async (t) => {
    const url = await mosquitto(t, [`max_packet_size ${MAX_PACKET_BYTES}`]);
    const received = await subscriber(t, url, ACCOUNT);
    const { client, clock, lines } = await resilient(t, url, protocolVersion);
    client.publish('t/ok/large', 'x'.repeat(2 * MAX_PACKET_BYTES));
    client.publish('t/ok/after', 'first after');
    client.publish('t/ok/after', 'second after');
    await until(clock, () => client.queued === 0, 'the queue emptied');
    await waitFor(() => received.length === 2, 'the messages behind it');
    t.deepEqual(received, ['first after', 'second after']);
    t.is(client.counters.refusedPublishes, 1);
    t.is(droppedLines(lines), 1, 'logged once');
    const connects = client.counters.connects;
    t.true(connects <= 2 + MAX_PUBLISH_TRIES, `${connects} connections`);
    // Nothing more goes: no reconnection comes however long the clock runs.
    await clock.advanceAsync(10_000);
    t.true(client.connected);
    t.is(client.counters.connects, connects);
  });
}

test(`MQTT 5: a publish mosquitto's ACL refuses (PUBACK 0x87 Not authorized) is dropped after ${MAX_PUBLISH_TRIES} tries, counted and logged once; those behind it go`, async (t) => {
  const url = await mosquitto(t, []);
  const received = await subscriber(t, url, ACCOUNT);
  const { client, clock, lines } = await resilient(t, url, 5);
  client.publish('t/denied', 'refused');
  client.publish('t/ok/after', 'after');
  await until(clock, () => client.queued === 0, 'the queue emptied');
  await waitFor(() => received.length === 1, 'the message behind it');
  t.deepEqual(received, ['after']);
  t.is(client.counters.refusedPublishes, 1);
  t.is(droppedLines(lines), 1);
  const dropped = lines.find((line) => line.message?.startsWith('publish dropped') === true);
  t.like(dropped?.fields, { topic: 't/denied', reason: '0x87 Not authorized', tries: MAX_PUBLISH_TRIES });
});

avaTest(
  `aedes (MQTT 3.1.1): a publish its authorizer refuses closes the connection; dropped after ${MAX_PUBLISH_TRIES} tries, those behind it go`,
  async (t) => {
    const broker = await startBroker({
      authorizePublish: (_client, packet, callback) => {
        callback(packet.topic === 't/refused' ? new Error('not for you') : null);
      },
    });
    t.teardown(() => broker.close());
    const received = await subscriber(t, broker.url);
    const { client, clock, lines } = await resilient(t, broker.url, 4, {});
    client.publish('t/refused', 'refused');
    client.publish('t/ok', 'after');
    await until(clock, () => client.queued === 0, 'the queue emptied');
    await waitFor(() => received.length === 1, 'the message behind it');
    t.deepEqual(received, ['after']);
    t.is(client.counters.refusedPublishes, 1);
    t.is(droppedLines(lines), 1);
  },
);
