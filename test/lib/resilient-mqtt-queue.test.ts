// ResilientMqttClient keeps a queued publish until the broker's PUBACK:
// one sent on a connection that is lost before its PUBACK goes
// again on the next connection (MQTT.js's reconnect forgets its in-flight
// publishes), and the queue empties only once a broker took it.
import test from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import { MemoryPublishQueue, ResilientMqttClient } from '../../lib/resilient-mqtt.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { waitFor } from '../helpers/wait.js';

test('a publish whose PUBACK never came is sent again on reconnection, and leaves the queue only when acknowledged', async (t) => {
  const brokers: TestBroker[] = [];
  t.teardown(async () => {
    for (const broker of brokers) await broker.close();
  });
  // A broker that takes the publish but never acknowledges it.
  const held: string[] = [];
  const holding = await startBroker({
    authorizePublish: (_client, packet, callback) =>
      packet.topic === 't/response' ? held.push(packet.payload.toString()) : callback(null),
  });
  brokers.push(holding);
  const clock = new FakeClock();
  const queue = new MemoryPublishQueue();
  const client = new ResilientMqttClient({
    url: holding.url,
    clientId: 'resilient-queue',
    clock,
    queue,
    backoff: { initialMs: 100, maxMs: 100, factor: 1, jitter: 0 },
  });
  t.teardown(() => client.stop());
  await client.start();

  client.publish('t/response', 'one');
  await waitFor(() => held.length === 1, 'the publish at the broker');
  t.is(client.queued, 1, 'still queued: no PUBACK yet');

  // That broker goes; another one, on the same port, acknowledges.
  await holding.close();
  const taking = await startBroker({}, holding.port);
  brokers.push(taking);
  const delivered: string[] = [];
  taking.broker.on('publish', (packet, from) => {
    if (from !== null && packet.topic === 't/response') delivered.push(packet.payload.toString());
  });
  await waitFor(async () => {
    await clock.advanceAsync(100);
    return client.connected;
  }, 'the reconnection');
  await waitFor(() => delivered.length === 1 && client.queued === 0, 'the publish sent again and acknowledged');
  t.deepEqual(delivered, ['one']);
});
