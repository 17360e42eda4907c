// Parkings and boxes on both stores: the repositories, the box
// registrations (api/boxes/add.ts, fleet.ts), the forwarding settings and the
// availability and demo rows, and the races across processes (two stores on
// one database, as two API or admin processes have): the 32 boxes of a
// parking and the module ids hold, of two observations the newer box_seq
// stays, the control sequence only rises, a forwarding secret shown once is
// the one stored.
import test, { type ExecutionContext } from 'ava';
import { addBox, type NewBoxInput } from '../../../api/boxes/add.js';
import { BoxAvailabilityStore } from '../../../api/boxes/availability.js';
import { provisionFleet } from '../../../api/boxes/fleet.js';
import { newProvisioning, provisionBox } from '../../../api/boxes/provisioning.js';
import type { Store } from '../../../api/db/store.js';
import { ensureDemo } from '../../../api/demo/ensure.js';
import { DomainError } from '../../../api/http/domain-error.js';
import { createParking } from '../../../api/parkings/create.js';
import { rotateForwardingSecret, setForwarding } from '../../../api/forwarding/parking-settings.js';
import { parkingView } from '../../../api/operators/parking-view.js';
import { MAX_BOXES_PER_PARKING } from '../../../api/boxes/limits.js';
import { BoxRepository, type BoxObservation } from '../../../api/boxes/repository.js';
import { DemoRepository } from '../../../api/demo/repository.js';
import { ParkingRepository } from '../../../api/parkings/repository.js';
import { TEST_SCRYPT_LOG2_N } from '../../helpers/api-app.js';
import { secondStore } from '../../helpers/second-store.js';
import { storeTests } from '../../helpers/stores.js';

/** The other process of a race of transactions: a second pool on PostgreSQL.
 * On SQLite the same store: a second connection in this process would wait
 * for the first's write lock in better-sqlite3's synchronous busy wait, which
 * holds the event loop the first transaction needs to finish; across real
 * processes BEGIN IMMEDIATE serializes the two, as the one connection's
 * queue does here. */
function otherProcess(t: ExecutionContext, store: Store): Store {
  return store.dialect === 'sqlite' ? store : secondStore(t, store);
}

const storeTest = storeTests(test);

const NOW = Date.UTC(2026, 10, 23, 12);
const URL = 'mqtt://127.0.0.1:1883';

const LOT = {
  name: 'Lot',
  description: null,
  currency: 'EUR',
  pricePerHourMinor: 250,
  maxDurationMinutes: 60,
  tries: 10,
  isOnline: false,
};

async function parking(store: Store, accessMode: 'sealed' | 'signed' = 'sealed'): Promise<number> {
  return (await createParking(store, LOT, accessMode, NOW)).id;
}

function mac(moduleId: number): string {
  return `02:00:00:00:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`;
}

function box(parkingId: number, moduleId: number): NewBoxInput {
  return { parkingId, moduleId, macAddress: mac(moduleId), direction: moduleId % 2 === 0 ? 'entrance' : 'exit' };
}

function observation(moduleId: number, boxSeq: number): BoxObservation {
  return {
    moduleId,
    seenAt: NOW + boxSeq,
    boxSeq,
    boxTime: 1_900_000_000 + boxSeq,
    driftSeconds: 1,
    batteryMv: 3000 + boxSeq,
  };
}

storeTest('parkings: insert (RETURNING id), find, forwarding settings and secret', async (t, store) => {
  const parkings = new ParkingRepository(store);
  const sealed = await parkings.insert({ ...LOT, keys: { accessMode: 'sealed', parkingKey: 'ab'.repeat(16) } }, NOW);
  const signed = await parkings.insert(
    {
      ...LOT,
      name: 'Signed',
      keys: { accessMode: 'signed', issuerPrivateKey: '01'.repeat(32), issuerPublicKey: '02'.repeat(64) },
    },
    NOW,
  );
  t.true(signed > sealed);
  t.like(await parkings.findById(sealed), {
    id: sealed,
    name: 'Lot',
    access_mode: 'sealed',
    parking_key: 'ab'.repeat(16),
    issuer_private_key: null,
    is_online: 0,
    is_active: 1,
    forwarding_url: null,
  });
  t.like(await parkings.findById(signed), {
    access_mode: 'signed',
    parking_key: null,
    issuer_public_key: '02'.repeat(64),
  });
  t.is(await parkings.findById(999), undefined);
  await parkings.setForwarding(sealed, 'https://example.test/', true, 'whsec_a', { forwardUnverified: true });
  await parkings.setForwardingSecret(sealed, 'whsec_b', { secret: 'whsec_a', until: NOW + 1 });
  t.like(await parkings.findById(sealed), {
    forwarding_url: 'https://example.test/',
    forwarding_expose: 1,
    forwarding_unverified: 1,
    forwarding_secret: 'whsec_b',
    forwarding_previous_secret: 'whsec_a',
    forwarding_previous_secret_until: NOW + 1,
  });
  t.like(await parkingView(store, signed), { id: signed, access_mode: 'signed', boxes: [] });
});

storeTest('boxes: insert, reads, count, highest module id, password, learned state', async (t, store) => {
  const boxes = new BoxRepository(store);
  const parkingId = await parking(store);
  t.is(await boxes.highestModuleId(), null);
  t.is(await boxes.countOf(parkingId), 0);
  for (const moduleId of [12, 11]) {
    await boxes.insert({ ...box(parkingId, moduleId), boxKey: '11'.repeat(16), mqttPasswordHash: 'h' }, NOW);
  }
  t.is(await boxes.highestModuleId(), 12);
  t.is(await boxes.countOf(parkingId), 2);
  t.deepEqual(
    (await boxes.listOfParking(parkingId)).map((row) => row.module_id),
    [11, 12],
  );
  t.deepEqual(
    (await boxes.listAll()).map((row) => row.module_id),
    [11, 12],
  );
  t.like(await boxes.findByModuleId(11), { mqtt_username: 'box-11', skew_seconds: 120, next_control_seq: 1 });
  t.is((await boxes.findByMac(mac(12)))?.module_id, 12);
  t.is(await boxes.findByModuleId(13), undefined);
  await boxes.setMqttPasswordHash(11, 'other');
  t.is((await boxes.findByModuleId(11))?.mqtt_password_hash, 'other');
  t.deepEqual(await boxes.learned(11), {
    last_seen_at: null,
    last_box_seq: null,
    last_box_time: null,
    box_time_drift_seconds: null,
    battery_mv: null,
    last_control_seq: null,
    next_control_seq: 1,
  });
  const view = await parkingView(store, parkingId);
  t.deepEqual(
    view.boxes.map((row) => row.module_id),
    [11, 12],
  );
});

storeTest(
  'noteObservation: only a newer box_seq wins; two at once across processes, the newer stays',
  async (t, store) => {
    const parkingId = await parking(store);
    await addBox(store, box(parkingId, 21), NOW);
    const mine = new BoxRepository(store);
    const theirs = new BoxRepository(secondStore(t, store));
    await mine.noteObservation(observation(21, 5));
    await mine.noteObservation(observation(21, 3));
    t.like(await mine.learned(21), { last_box_seq: 5, battery_mv: 3005, last_seen_at: NOW + 5 });
    for (let round = 0; round < 10; round++) {
      const older = 10 + 2 * round;
      const newer = older + 1;
      // Each order, half of the rounds.
      await Promise.all(
        round % 2 === 0
          ? [mine.noteObservation(observation(21, newer)), theirs.noteObservation(observation(21, older))]
          : [theirs.noteObservation(observation(21, older)), mine.noteObservation(observation(21, newer))],
      );
      t.like(await mine.learned(21), { last_box_seq: newer, battery_mv: 3000 + newer });
    }
  },
);

storeTest(
  'noteControlSequence: next only rises, accepted recorded; two at once across processes, the larger stays',
  async (t, store) => {
    const parkingId = await parking(store);
    await addBox(store, box(parkingId, 31), NOW);
    const mine = new BoxRepository(store);
    const theirs = new BoxRepository(secondStore(t, store));
    await mine.noteControlSequence(31, 40, false);
    t.like(await mine.learned(31), { next_control_seq: 41, last_control_seq: null });
    await mine.noteControlSequence(31, 7, true);
    t.like(await mine.learned(31), { next_control_seq: 41, last_control_seq: 7 });
    for (let round = 0; round < 10; round++) {
      const low = 100 + 10 * round;
      const high = low + 5;
      await Promise.all(
        round % 2 === 0
          ? [mine.noteControlSequence(31, high, true), theirs.noteControlSequence(31, low, true)]
          : [theirs.noteControlSequence(31, low, true), mine.noteControlSequence(31, high, true)],
      );
      t.like(await mine.learned(31), { next_control_seq: high + 1, last_control_seq: high });
    }
  },
);

storeTest(
  'addBox: refusals as domain errors; the 32nd box of a parking added by two processes at once: one wins',
  async (t, store) => {
    const parkingId = await parking(store);
    const added = await addBox(store, box(parkingId, 100), NOW);
    t.like(added, { module_id: 100, parking_id: parkingId, mqtt_username: 'box-100' });
    const refused = async (input: NewBoxInput, message: string) => {
      const error = await t.throwsAsync(addBox(store, input, NOW), { instanceOf: DomainError });
      t.is(error.message, message);
    };
    await refused(box(999, 1), 'no secured parking with id 999');
    await refused({ ...box(parkingId, 100), macAddress: mac(5) }, 'module id 100 is already registered');
    await refused({ ...box(parkingId, 101), macAddress: mac(100) }, `MAC address ${mac(100)} is already registered`);
    const boxes = new BoxRepository(store);
    const other = otherProcess(t, store);
    for (let round = 0; round < 8; round++) {
      // A parking with 31 boxes: room for one. Two processes add one each at once.
      const lot = await parking(store);
      const first = 1000 + 100 * round;
      for (let moduleId = first; moduleId < first + MAX_BOXES_PER_PARKING - 1; moduleId++)
        await boxes.insert({ ...box(lot, moduleId), boxKey: '11'.repeat(16), mqttPasswordHash: 'h' }, NOW);
      const results = await Promise.allSettled([
        addBox(store, box(lot, first + 50), NOW),
        addBox(other, box(lot, first + 51), NOW),
      ]);
      t.is(results.filter((result) => result.status === 'fulfilled').length, 1, 'one of the two');
      const loser = results.find((result) => result.status === 'rejected');
      t.regex(String(loser?.reason), /already has 32 boxes/);
      t.is(await boxes.countOf(lot), MAX_BOXES_PER_PARKING);
    }
  },
);

storeTest(
  'provisionFleet: two fleets at once from two processes get distinct module ids, 32 boxes a parking',
  async (t, store) => {
    const first = await parking(store);
    const second = await parking(store, 'signed');
    const other = otherProcess(t, store);
    const request = { count: 40, createParkings: true, mqttUrl: URL };
    const [a, b] = await Promise.all([
      provisionFleet(store, { ...request, parkingId: first }, NOW),
      provisionFleet(other, { ...request, parkingId: second }, NOW),
    ]);
    const ids = [...a.files, ...b.files].map((file) => file.module_id);
    t.is(new Set(ids).size, 80, 'no module id twice');
    t.deepEqual(
      [...ids].sort((x, y) => x - y),
      Array.from({ length: 80 }, (_, index) => 100_000 + index),
    );
    t.is(a.parkingIds.length, 2);
    t.is(b.parkingIds.length, 2);
    const boxes = new BoxRepository(store);
    for (const parkingId of [...a.parkingIds, ...b.parkingIds])
      t.true((await boxes.countOf(parkingId)) <= MAX_BOXES_PER_PARKING);
    t.is((await boxes.listAll()).length, 80);
    // A fleet file is what provisioning gives: the stored row's defaults.
    const row = await boxes.findByModuleId(a.files[0]?.module_id ?? 0);
    t.is(a.files[0]?.skew_seconds, row?.skew_seconds);
    const refusal = await t.throwsAsync(
      provisionFleet(store, { ...request, count: 1, createParkings: false, parkingId: first }, NOW),
      {
        instanceOf: DomainError,
      },
    );
    t.regex(refusal.message, /has room for 0 more boxes/);
  },
);

storeTest('provisioning: a fresh MQTT password stored only when asked', async (t, store) => {
  const parkingId = await parking(store, 'signed');
  await addBox(store, box(parkingId, 300), NOW);
  const boxes = new BoxRepository(store);
  const before = (await boxes.findByModuleId(300))?.mqtt_password_hash;
  const pending = await newProvisioning(store, 300, URL);
  t.is((await boxes.findByModuleId(300))?.mqtt_password_hash, before, 'not yet');
  t.is(pending.file.parking_key, null, 'a signed parking gives no parking key');
  await pending.store();
  const stored = (await boxes.findByModuleId(300))?.mqtt_password_hash;
  t.not(stored, before);
  const file = await provisionBox(store, 300, URL);
  t.is(file.mqtt.username, 'box-300');
  t.not((await boxes.findByModuleId(300))?.mqtt_password_hash, stored);
  await t.throwsAsync(provisionBox(store, 7, URL), { instanceOf: DomainError, message: 'no box with module id 7' });
});

storeTest(
  'forwarding: the first setting of two processes at once shows one secret, the stored one',
  async (t, store) => {
    const other = otherProcess(t, store);
    const change = { url: 'https://example.test/logs', expose: true };
    let parkingId = 0;
    let shown: (string | null)[] = [];
    for (let round = 0; round < 10; round++) {
      parkingId = await parking(store);
      const settings = await Promise.all([
        setForwarding(store, parkingId, change, NOW),
        setForwarding(other, parkingId, { ...change, url: 'https://example.test/other' }, NOW),
      ]);
      shown = settings.map((setting) => setting.forwarding_secret).filter((secret) => secret !== null);
      t.is(shown.length, 1, 'made once');
      const stored = await new ParkingRepository(store).findById(parkingId);
      t.is(stored?.forwarding_secret, shown[0]);
    }
    const rotated = await rotateForwardingSecret(store, parkingId, 2, NOW);
    t.not(rotated.forwarding_secret, shown[0]);
    t.is(rotated.previous_secret_until, new Date(NOW + 2 * 3_600_000).toISOString());
    t.like(await new ParkingRepository(store).findById(parkingId), {
      forwarding_secret: rotated.forwarding_secret,
      forwarding_previous_secret: shown[0],
    });
    await t.throwsAsync(setForwarding(store, 99, change, NOW), {
      instanceOf: DomainError,
      message: 'no secured parking with id 99',
    });
  },
);

storeTest('box availability: one upsert a box, the later values stay; clear forgets all', async (t, store) => {
  const availability = new BoxAvailabilityStore(store);
  await availability.store(41, { availability: 'online', reason: null, since: NOW, gatewayId: null }, NOW);
  await availability.store(
    41,
    { availability: 'offline', reason: 'gateway gw-1 offline', since: NOW + 1, gatewayId: 'gw-1' },
    NOW + 1,
  );
  await availability.store(42, { availability: 'online', reason: null, since: NOW, gatewayId: 'gw-1' }, NOW);
  t.deepEqual(await availability.find(41), {
    module_id: 41,
    availability: 'offline',
    reason: 'gateway gw-1 offline',
    since: NOW + 1,
    gateway_id: 'gw-1',
  });
  t.is((await availability.find(42))?.availability, 'online');
  await availability.clear();
  t.is(await availability.find(41), undefined);
});

storeTest('demo: recorded once, then the same data', async (t, store) => {
  const demo = new DemoRepository(store);
  t.is(await demo.find(), undefined);
  const first = await ensureDemo(store, TEST_SCRYPT_LOG2_N, NOW);
  t.is(first.boxes.length, 2);
  t.like(await demo.find(), { parking_id: first.parking_id, client_secret: first.client_secret });
  t.deepEqual(await ensureDemo(store, TEST_SCRYPT_LOG2_N, NOW + 1000), first);
});
