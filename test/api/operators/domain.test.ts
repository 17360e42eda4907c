// The operator's domain as services (api/boxes/,
// api/parkings/, api/mqtt/clients.ts, api/forwarding/administration.ts,
// api/demo/), called on a database without the CLI. They refuse with a
// DomainError of a kind (not a CliError) whose message is the CLI's line.
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { addBox } from '../../../api/boxes/add.js';
import { provisionFleet } from '../../../api/boxes/fleet.js';
import { provisionBox } from '../../../api/boxes/provisioning.js';
import { boxStatuses } from '../../../api/operators/box-status.js';
import { ControlRefusal, rotateIssuer } from '../../../api/control/operations.js';
import { openDatabase, type Db } from '../../../api/db/open.js';
import { sqliteStore } from '../../../api/db/store.js';
import { ensureDemo } from '../../../api/demo/ensure.js';
import { DomainError } from '../../../api/http/domain-error.js';
import { forwardingStatus, replayBoxLogs, reviveDeadDeliveries } from '../../../api/forwarding/administration.js';
import { addMqttClient } from '../../../api/mqtt/clients.js';
import { createParking } from '../../../api/parkings/create.js';
import { rotateForwardingSecret, setForwarding } from '../../../api/forwarding/parking-settings.js';
import { BoxRepository } from '../../../api/boxes/repository.js';
import { TEST_SCRYPT_LOG2_N, tempDir } from '../../helpers/api-app.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const URL = 'mqtt://127.0.0.1:1883';

function database(t: ExecutionContext): Db {
  const db = openDatabase(join(tempDir(t, 'parkbench-domain-'), 'domain.sqlite'));
  t.teardown(() => db.close());
  return db;
}

async function parking(db: Db, accessMode: 'signed' | 'sealed' = 'signed'): Promise<number> {
  const created = await createParking(
    sqliteStore(db),
    {
      name: 'Lot',
      description: null,
      currency: 'EUR',
      pricePerHourMinor: 250,
      maxDurationMinutes: 60,
      tries: 10,
      isOnline: false,
    },
    accessMode,
    NOW,
  );
  return created.id;
}

async function refusalAsync(
  t: ExecutionContext,
  work: () => Promise<unknown>,
  kind: DomainError['kind'],
  message: string,
): Promise<void> {
  const error = await t.throwsAsync(work, { instanceOf: DomainError });
  t.is(error.kind, kind);
  t.is(error.message, message);
}

test('addBox: the box with its credentials; a missing parking, a taken module id or MAC are domain errors', async (t) => {
  const db = database(t);
  const store = sqliteStore(db);
  const parkingId = await parking(db);
  const added = await addBox(
    store,
    { parkingId, moduleId: 9101, macAddress: '02:50:42:00:23:8D', direction: 'entrance' },
    NOW,
  );
  t.like(added, { module_id: 9101, parking_id: parkingId, mqtt_username: 'box-9101' });
  t.regex(added.box_key, /^[0-9a-f]{32}$/);
  await refusalAsync(
    t,
    () => addBox(store, { parkingId: 99, moduleId: 1, macAddress: '02:00:00:00:00:01', direction: 'exit' }, NOW),
    'not_found',
    'no secured parking with id 99',
  );
  await refusalAsync(
    t,
    () => addBox(store, { parkingId, moduleId: 9101, macAddress: '02:00:00:00:00:01', direction: 'exit' }, NOW),
    'conflict',
    'module id 9101 is already registered',
  );
  await refusalAsync(
    t,
    () => addBox(store, { parkingId, moduleId: 9102, macAddress: '02:50:42:00:23:8D', direction: 'exit' }, NOW),
    'conflict',
    'MAC address 02:50:42:00:23:8D is already registered',
  );
  await refusalAsync(t, () => boxStatuses(store, { moduleId: 7 }, NOW), 'not_found', 'no box with module id 7');
  await refusalAsync(t, () => provisionBox(store, 7, URL), 'not_found', 'no box with module id 7');
});

test('provisionFleet: each file carries the skew and battery threshold stored for its box (the table defaults)', async (t) => {
  const db = database(t);
  const store = sqliteStore(db);
  const parkingId = await parking(db, 'sealed');
  const { files, parkingIds } = await provisionFleet(
    store,
    { parkingId, count: 40, createParkings: true, mqttUrl: URL },
    NOW,
  );
  t.is(files.length, 40);
  t.is(parkingIds.length, 2, '32 boxes a parking');
  const boxes = new BoxRepository(store);
  for (const file of files) {
    const row = await boxes.findByModuleId(file.module_id);
    if (row === undefined) return t.fail(`box ${file.module_id} is stored`);
    t.is(file.skew_seconds, row.skew_seconds);
    t.is(file.min_battery_mv, row.min_battery_mv);
    t.is(file.mqtt.url, URL);
  }
  t.is(files[0]?.module_id, 100_000, 'an empty table: fleet module ids from 100000');
  await refusalAsync(
    t,
    () => provisionFleet(store, { parkingId, count: 1, createParkings: false, mqttUrl: URL }, NOW),
    'conflict',
    `secured parking ${parkingId} has room for 0 more boxes (at most 32): use --create-parkings to spread the fleet over new parkings like it`,
  );
  await refusalAsync(
    t,
    () => provisionFleet(store, { parkingId: 99, count: 1, createParkings: false, mqttUrl: URL }, NOW),
    'not_found',
    'no secured parking with id 99',
  );
});

test('forwarding, MQTT clients and control operations refuse with domain errors too', async (t) => {
  const db = database(t);
  const store = sqliteStore(db);
  const parkingId = await parking(db);
  const set = await setForwarding(store, parkingId, { url: 'https://example.test/logs', expose: true }, NOW);
  t.like(set, { parking_id: parkingId, expose: true, forward_unverified: false });
  t.regex(set.forwarding_secret ?? '', /^whsec_/, 'shown when made');
  t.is(
    (await setForwarding(store, parkingId, { url: 'https://example.test/other', expose: false }, NOW))
      .forwarding_secret,
    null,
    'kept, and not shown again',
  );
  await refusalAsync(
    t,
    () => setForwarding(store, 99, { url: 'https://example.test/', expose: true }, NOW),
    'not_found',
    'no secured parking with id 99',
  );
  await refusalAsync(
    t,
    () => rotateForwardingSecret(store, parkingId, 721, NOW),
    'refused',
    'the overlap must be 0 to 720 hours, got 721',
  );
  await refusalAsync(
    t,
    () => replayBoxLogs(store, parkingId, NOW - 1000, NOW),
    'refused',
    `parking ${parkingId} does not forward its box logs: set a URL with --expose true first (admin parking forwarding)`,
  );
  t.deepEqual(await forwardingStatus(store, parkingId), []);
  await refusalAsync(t, () => forwardingStatus(store, 99), 'not_found', 'no secured parking with id 99');
  await refusalAsync(t, () => reviveDeadDeliveries(store, 99, NOW), 'not_found', 'no secured parking with id 99');
  t.is((await addMqttClient(store, 'Bench 1', 'gateway', NOW)).mqtt_username, 'gw-bench-1');
  const taken = await t.throwsAsync(addMqttClient(store, 'bench 1', 'gateway', NOW), {
    instanceOf: DomainError,
  });
  t.like(taken, { kind: 'conflict', message: 'an MQTT client gw-bench-1 already exists: choose another --name' });
  const error = await t.throwsAsync(() => rotateIssuer({ store }, 99, NOW, 'test'));
  t.true(error instanceof ControlRefusal && error instanceof DomainError);
});

test('ensureDemo: made once, the same credentials after', async (t) => {
  const db = database(t);
  const first = await ensureDemo(sqliteStore(db), TEST_SCRYPT_LOG2_N, NOW);
  t.is(first.boxes.length, 2);
  t.deepEqual(await ensureDemo(sqliteStore(db), TEST_SCRYPT_LOG2_N, NOW + 1000), first);
});
