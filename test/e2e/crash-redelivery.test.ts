// Nothing acknowledged is lost (docs/architecture.md, Delivery): a box
// streams N distinct verified responses at QoS 1 to `parkbench api` (its
// embedded broker commits each box log before the PUBACK); the API is killed
// with SIGKILL in the middle of the stream and started again on the same
// database and ports; the box's MQTT client resends what was not
// acknowledged. Every response ends up stored exactly once.
import test from 'ava';
import mqtt from 'mqtt';
import { sqliteStore } from '../../api/db/store.js';
import { BoxRepository } from '../../api/boxes/repository.js';
import { ParkingRepository } from '../../api/parkings/repository.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseProvisioning } from '../../lib/provisioning-file.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { freePort } from '../../lib/free-port.js';
import { makeVerifiedResponses } from '../../simulator/verified-responses.js';
import { brokerFixture } from '../helpers/mqtt-fixtures.js';

const topics = new Topics();
const MODULE_ID = 9151;
const COUNT = 200;
/** Responses acknowledged when the API is killed. */
const KILL_AFTER = 70;
/** Publishes in flight at once, so some are unacknowledged at the kill. */
const WINDOW = 20;

test('SIGKILL of the API mid-stream, then a restart: every response stored once, none lost, none twice', async (t) => {
  const fixture = await brokerFixture(t, [MODULE_ID]);
  const store = sqliteStore(fixture.db);
  const box = await new BoxRepository(store).findByModuleId(MODULE_ID);
  const parking = await new ParkingRepository(store).findById(fixture.parkingId);
  if (box === undefined || parking === undefined) throw new Error('fixture without its box');
  const provisioning = parseProvisioning({
    module_id: MODULE_ID,
    parking_id: parking.id,
    direction: box.direction,
    mac_address: box.mac_address,
    parking_key: parking.parking_key,
    box_key: box.box_key,
  });
  const responses = await makeVerifiedResponses(provisioning, COUNT);

  const env = {
    DATABASE_PATH: fixture.databasePath,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    MQTT_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  };
  const startApi = async (): Promise<CliProcess> => {
    const api = startCli(t, ['api'], env);
    await api.waitForLine(/MQTT broker listening/);
    return api;
  };
  let api = await startApi();

  // A persistent session (clean: false, one clientId) that reconnects on its
  // own: MQTT.js keeps unacknowledged QoS 1 publishes and resends them.
  const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${env.MQTT_PORT}`, {
    clientId: `crash-test-${MODULE_ID}`,
    clean: false,
    username: `box-${MODULE_ID}`,
    password: fixture.boxes.get(MODULE_ID) ?? '',
    reconnectPeriod: 100,
    connectTimeout: 2_000,
  });
  t.teardown(() => publisher.endAsync(true));
  let sent = 0;
  publisher.on('packetsend', (packet) => {
    if (packet.cmd === 'publish') sent++;
  });
  let acknowledged = 0;
  let acknowledgedAtKill = -1;
  let killed: Promise<number | string> | undefined;
  const topic = topics.box(MODULE_ID, 'response');
  const publishAll = async (): Promise<void> => {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < responses.length) {
        const payload = responses[next++]?.payload ?? '';
        await publisher.publishAsync(topic, payload, { qos: 1 });
        acknowledged++;
        if (acknowledged === KILL_AFTER) {
          acknowledgedAtKill = acknowledged;
          api.child.kill('SIGKILL');
          killed = api.exited;
        }
      }
    };
    await Promise.all(Array.from({ length: WINDOW }, lane));
  };
  const stream = publishAll();
  // Restarted on the same database and ports once the kill has landed.
  while (killed === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  t.is(await killed, 'SIGKILL');
  t.true(acknowledged < COUNT, 'the stream was still going when the API died');
  api = await startApi();
  let deadline: NodeJS.Timeout | undefined;
  await Promise.race([
    stream,
    new Promise(
      (_, reject) =>
        (deadline = setTimeout(
          () => reject(new Error(`only ${acknowledged}/${COUNT} acknowledged after the restart`)),
          20_000,
        )),
    ),
  ]);
  clearTimeout(deadline);

  t.is(acknowledgedAtKill, KILL_AFTER);
  t.is(acknowledged, COUNT);
  t.log(`${sent} publishes sent for ${COUNT} responses`);
  t.true(sent > COUNT, 'publishes in flight at the kill were sent again');
  const stored = fixture.db
    .prepare('SELECT box_seq FROM box_logs WHERE equipment_id = ? AND verified = 1')
    .pluck()
    .all(MODULE_ID) as number[];
  t.is(stored.length, COUNT, 'one verified box log per response');
  t.deepEqual(
    [...stored].sort((a, b) => a - b),
    responses.map((response) => response.boxSeq).sort((a, b) => a - b),
    'exactly the box_seqs sent',
  );
  t.is(fixture.db.prepare('SELECT count(*) FROM box_logs').pluck().get(), COUNT, 'no unverified leftovers');
  await api.stop();
});
