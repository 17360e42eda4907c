// A client declaring a huge packet is refused at its fixed
// header, before the broker buffers the body. Against a real `parkbench api`
// process, whose memory is what the HTTP API shares.
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import test from 'ava';
import mqtt from 'mqtt';
import { Topics } from '../../../lib/mqtt-topics.js';
import { startCli } from '../../helpers/cli-process.js';
import { freePort } from '../../../lib/free-port.js';
import { waitFor } from '../../helpers/wait.js';
import { brokerFixture } from '../../helpers/mqtt-fixtures.js';

const topics = new Topics();
const CLIENTS = 8;
const STREAM_BYTES = 32 * 1024 * 1024;

/** Resident memory of a process, MiB (ps works on Linux and macOS). */
function rssMiB(pid: number): number {
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) / 1024;
}

/** A raw TCP client: a CONNECT fixed header declaring 256 MB (the largest
 * remaining length), then up to STREAM_BYTES of body as fast as the broker
 * reads. Resolves with how long the broker kept the connection open after the
 * header, or null when it was still open once everything was sent (and a
 * grace period passed). */
function hugeConnect(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    let sentAt = 0;
    let closed = false;
    socket.on('error', () => undefined);
    socket.once('close', () => {
      closed = true;
      resolve(Date.now() - sentAt);
    });
    socket.once('connect', () => {
      sentAt = Date.now();
      socket.write(Buffer.from([0x10, 0xff, 0xff, 0xff, 0x7f]));
      let sent = 0;
      const pump = (): void => {
        while (!closed && sent < STREAM_BYTES) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        if (!closed) {
          setTimeout(() => {
            if (closed) return;
            resolve(null);
            socket.destroy();
          }, 3_000);
        }
      };
      pump();
    });
  });
}

test('eight clients declaring 256 MB CONNECTs are closed at the header and the process memory stays flat', async (t) => {
  const fixture = await brokerFixture(t);
  const env = {
    DATABASE_PATH: fixture.databasePath,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    MQTT_PORT: String(await freePort()),
    MQTT_MAX_PACKET_BYTES: '131072',
    LOG_LEVEL: 'info',
  };
  const api = startCli(t, ['api'], env);
  await api.waitForLine(/MQTT broker listening/);
  const pid = api.child.pid ?? 0;
  const before = rssMiB(pid);

  const openFor = await Promise.all(Array.from({ length: CLIENTS }, () => hugeConnect(Number(env.MQTT_PORT))));
  const after = rssMiB(pid);
  t.log(
    `RSS of parkbench api: ${before.toFixed(0)} MiB before, ${after.toFixed(0)} MiB after ${CLIENTS} clients each streaming ${STREAM_BYTES / 1024 / 1024} MiB into a 256 MB CONNECT`,
  );

  t.true(
    openFor.every((ms) => ms !== null && ms < 2_000),
    `every connection closed within 2 s of its header (ms: ${openFor.join(', ')})`,
  );
  t.true(after - before < 64, `RSS grew by ${(after - before).toFixed(0)} MiB`);
  const refusals = (): number => api.stdout.filter((line) => line.includes('MQTT packet refused')).length;
  await waitFor(() => refusals() >= CLIENTS, 'each refusal logged');
  t.is(refusals(), CLIENTS);

  // Everyone else is unaffected; MQTT_MAX_PACKET_BYTES (128 KiB here) lets a 100 KiB message through.
  const box = await mqtt.connectAsync(`mqtt://127.0.0.1:${env.MQTT_PORT}`, {
    username: 'box-9101',
    password: fixture.boxes.get(9101) ?? '',
    reconnectPeriod: 0,
  });
  t.teardown(() => box.endAsync(true));
  await box.publishAsync(topics.box(9101, 'state'), JSON.stringify({ pad: 'x'.repeat(100 * 1024) }), { qos: 1 });
  t.true(box.connected);
});
