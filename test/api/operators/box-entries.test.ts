// GET /api/operator/parkings and the event stream's snapshot (a bench page
// of 5,000 boxes) read every box's state in a few set-based
// statements (one per kind), not several per box; the entries are the same
// as the per-box services give (boxStatuses, parkingView, lastResponseOf).
import test, { type ExecutionContext } from 'ava';
import { BoxAvailabilityStore } from '../../../api/boxes/availability.js';
import { provisionFleet } from '../../../api/boxes/fleet.js';
import { boxStatuses } from '../../../api/operators/box-status.js';
import { intervene, listControlCommands } from '../../../api/control/interventions.js';
import { revokeSmartKey, rotateIssuer } from '../../../api/control/operations.js';
import type { Db } from '../../../api/db/open.js';
import { sqliteStore, type Store } from '../../../api/db/store.js';
import { operatorParkings } from '../../../api/operators/box-entries.js';
import { lastResponseOf, type OperatorParking } from '../../../api/operators/views.js';
import { parkingView } from '../../../api/operators/parking-view.js';
import { ReservationRows, viewOf } from '../../../api/reservations/index.js';
import { addOperator } from '../../../api/operators/accounts.js';
import { Barrier } from '../../../firmware-protocol/index.js';
import { boxAnswer, boxLog, postBoxLogs } from '../../helpers/box-logs.js';
import { loggedIn, me, sqliteConnection, testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { insertSmartKey } from '../../helpers/store-rows.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);

/** The statements a read runs (better-sqlite3 has no hook: the database's prepare is wrapped). */
function countingStatements(db: Db): { db: Db; runs: () => number } {
  let runs = 0;
  const counted = new Proxy(db, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver) as unknown;
      return (source: string) => {
        const statement = target.prepare(source);
        return new Proxy(statement, {
          get(inner, name, innerReceiver) {
            const value = Reflect.get(inner, name, innerReceiver) as unknown;
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              if (name === 'get' || name === 'all' || name === 'iterate' || name === 'run') runs++;
              return (value as (...a: unknown[]) => unknown).apply(inner, args);
            };
          },
        });
      };
    },
  });
  return { db: counted, runs: () => runs };
}

async function fleet(store: Store, parkingId: number, count: number): Promise<void> {
  await provisionFleet(store, { parkingId, count, createParkings: true, mqttUrl: 'mqtt://127.0.0.1:1883' }, NOW);
}

async function statementsFor(t: ExecutionContext, db: Db): Promise<number> {
  const counting = countingStatements(db);
  // A store of its own over the counted connection (our driver prepares through it).
  const parkings = await operatorParkings(sqliteStore(counting.db), NOW);
  t.true(parkings.length > 0);
  return counting.runs();
}

test('operatorParkings: the same number of statements for 1 box and for 101 (set-based, not per box or parking; counted on SQLite, whose driver can be wrapped)', async (t) => {
  const app = await testApp(t, {}, { store: 'sqlite' });
  const parking = await seedParking(app, { boxes: ['entrance'] });
  const few = await statementsFor(t, sqliteConnection(app));
  await fleet(app.ctx.store, parking.id, 100);
  const many = await statementsFor(t, sqliteConnection(app));
  t.is((await operatorParkings(app.ctx.store, NOW)).flatMap((each) => each.boxes).length, 101);
  t.is(many, few, `${few} statements with 1 box, ${many} with 101`);
  t.true(many <= 5, `${many} statements`);
});

/** What operatorParkings gave before it read in sets: the per-box services, composed. */
async function perBox(store: Store): Promise<OperatorParking[]> {
  const ids = await store.kysely.selectFrom('secured_parkings').select('id').orderBy('id').execute();
  const parkings: OperatorParking[] = [];
  for (const { id } of ids) {
    const view = await parkingView(store, id);
    const macs = new Map(view.boxes.map((box) => [box.module_id, box.mac_address]));
    const boxes = [];
    for (const status of await boxStatuses(store, { parkingId: id }, NOW)) {
      boxes.push({
        ...status,
        mac_address: macs.get(status.module_id) ?? '',
        last_response: await lastResponseOf(store, status.module_id),
        reservation: viewOf(await new ReservationRows(store).liveRowsOf(status.module_id, NOW)),
      });
    }
    parkings.push({ ...view, boxes });
  }
  return parkings;
}

test('operatorParkings: every entry as the per-box services give it (availability, last response, pending control, revoked keys a box still takes, empty parkings)', async (t) => {
  const app = await testApp(t);
  const sealed = await seedParking(app);
  const signed = await seedParking(app, { accessMode: 'signed', boxes: ['entrance', 'exit'] });
  await seedParking(app, { boxes: [] });
  await fleet(app.ctx.store, sealed.id, 40);
  // A verified response (battery, sequence, barrier, via), twice for one box: the newest wins.
  const driver = await loggedIn(app);
  const userId = (await me(app, `Bearer ${driver.access_token}`)).json<{ id: number }>().id;
  for (const barrier of [Barrier.CLOSED, Barrier.OPEN]) {
    const response = boxAnswer(sealed.exit, null, { barrier, batteryMv: 3456 });
    const posted = await postBoxLogs(app, driver.access_token, {
      box_logs: [
        boxLog({ foUserId: userId, smartKeyId: null, box: sealed.exit, parkingId: sealed.id, command: null, response }),
      ],
    });
    t.is(posted.statusCode, 201, posted.body);
  }
  // Pending control commands (SET_ISSUER to each box of the signed parking), and availabilities.
  await rotateIssuer(app.ctx, signed.id, NOW, 'test');
  const availability = new BoxAvailabilityStore(app.ctx.store);
  await availability.store(
    sealed.entrance.moduleId,
    { availability: 'online', reason: null, since: NOW, gatewayId: null },
    NOW,
  );
  await availability.store(
    signed.exit.moduleId,
    { availability: 'offline', reason: 'gateway gw-1 offline', since: NOW, gatewayId: 'gw-1' },
    NOW,
  );
  // A revoked key whose REVOKE to the sealed entrance was skipped: that box still takes it.
  await insertSmartKey(app.ctx.store, {
    id: 7_001,
    parkingId: sealed.id,
    moduleIds: [sealed.entrance.moduleId, sealed.exit.moduleId],
    startTime: NOW,
  });
  const revocation = await revokeSmartKey(app.ctx, 7_001, NOW, 'test');
  t.is(revocation.pending, 2);
  const [toEntrance] = await listControlCommands(app.ctx.store, {
    moduleId: sealed.entrance.moduleId,
    state: 'pending',
    limit: 1,
  });
  await intervene(app.ctx.store, toEntrance?.id ?? 0, 'skip', NOW, 'test');
  // A box held by an operator, with one waiting; and a held reservation that has passed.
  await addOperator(app.ctx.store, 'ci', NOW);
  const operator = await app.ctx.store.kysely
    .selectFrom('operators')
    .select('id')
    .where('name', '=', 'ci')
    .executeTakeFirstOrThrow();
  const reservation = { operator_id: operator.id, holder: 'ci', ttl_ms: 60_000, queued_at: NOW - 1_000 };
  await app.ctx.store.kysely
    .insertInto('box_reservations')
    .values([
      {
        ...reservation,
        module_id: sealed.exit.moduleId,
        token_hash: 'a',
        note: 'CI job 1',
        state: 'held',
        held_since: NOW - 1_000,
        expires_at: NOW + 59_000,
      },
      {
        ...reservation,
        module_id: sealed.exit.moduleId,
        token_hash: 'b',
        note: null,
        state: 'waiting',
        held_since: null,
        expires_at: NOW + 5_000,
      },
      {
        ...reservation,
        module_id: signed.exit.moduleId,
        token_hash: 'c',
        note: null,
        state: 'held',
        held_since: NOW - 61_000,
        expires_at: NOW,
      },
    ])
    .execute();
  const expected = await perBox(app.ctx.store);
  const boxes = expected.flatMap((parking) => parking.boxes);
  t.like(boxes.find((box) => box.module_id === sealed.entrance.moduleId)?.revocations_missing[0], {
    smart_key_id: 7_001,
  });
  t.true(boxes.some((box) => box.remedy === null));
  t.true(boxes.some((box) => box.pending_control_commands.length > 0));
  t.is(boxes.find((box) => box.module_id === sealed.exit.moduleId)?.last_response?.barrier, 'open');
  t.true(expected.some((parking) => parking.boxes.length === 0));
  t.like(boxes.find((box) => box.module_id === sealed.exit.moduleId)?.reservation, {
    holder: 'ci',
    note: 'CI job 1',
    queue: [{ holder: 'ci', note: null }],
  });
  t.is(boxes.find((box) => box.module_id === signed.exit.moduleId)?.reservation, null);
  t.deepEqual(await operatorParkings(app.ctx.store, NOW), expected);
});
