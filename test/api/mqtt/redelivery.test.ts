// A response message the broker delivers twice (after a reconnect, or to the
// kept session of an API process that died before its PUBACK) is one box
// log: a verified one by its box_seq, an unverified one (no answer, a tag
// that does not verify) by the message's digest (box_logs.message_digest).
// Another message with the same command is another log. A real client
// publishes the same bytes twice on the real embedded broker, on either store.
import test from 'ava';
import mqtt from 'mqtt';
import { hashMqttPassword } from '../../../api/auth/mqtt-password.js';
import { MqttAccountRepository } from '../../../api/mqtt/accounts.js';
import { FrameKind, sealCommand } from '../../../firmware-protocol/index.js';
import { Topics } from '../../../lib/mqtt-topics.js';
import { testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { all } from '../../helpers/sql.js';
import { waitFor } from '../../helpers/wait.js';

test('an unverified response message delivered twice is stored once (the second a duplicate); another message for the same command is stored', async (t) => {
  const app = await testApp(t, {}, { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } });
  const parking = await seedParking(app);
  const box = parking.entrance;
  await new MqttAccountRepository(app.ctx.store).addClient(
    { name: 'bench', role: 'gateway', username: 'gw-bench', password_hash: hashMqttPassword('gw-pw') },
    app.clock.now(),
  );
  const client = await mqtt.connectAsync(app.mqtt?.url ?? '', {
    username: 'gw-bench',
    password: 'gw-pw',
    reconnectPeriod: 0,
  });
  t.teardown(() => client.endAsync(true));
  const command = sealCommand({ kind: FrameKind.BATTERY_QUERY, key: box.boxKey, keyId: 7, scope: box.moduleId });
  const message = (receivedAt: string) =>
    JSON.stringify({
      command: command.toString('base64'),
      response: null,
      received_at: receivedAt,
      via: 'serial',
      context: {},
      error: 'timeout',
    });
  const topic = new Topics().box(box.moduleId, 'response');
  const ingestion = app.mqtt?.ingestion;
  const settled = () => (ingestion?.counters.stored ?? 0) + (ingestion?.counters.duplicates ?? 0);

  const first = message('2026-01-01T00:00:01.000Z');
  await client.publishAsync(topic, first, { qos: 1 });
  await client.publishAsync(topic, first, { qos: 1 });
  await waitFor(() => settled() >= 2, 'both deliveries ingested');
  t.like(ingestion?.counters, { stored: 1, duplicates: 1 });
  // A later timeout of the same command (the gateway tried again) is news.
  await client.publishAsync(topic, message('2026-01-01T00:00:03.000Z'), { qos: 1 });
  await waitFor(() => settled() >= 3, 'the third message ingested');
  const logs = await all<{ verified: number; created_at: string }>(
    app.ctx.store,
    'SELECT verified, created_at FROM box_logs ORDER BY id',
  );
  t.deepEqual(logs, [
    { verified: 0, created_at: '2026-01-01 00:00:01' },
    { verified: 0, created_at: '2026-01-01 00:00:03' },
  ]);
});
