// Row locks on PostgreSQL, provoked on a real server (api/db/lost-race.ts):
// the transactions that used to deadlock now wait for each other and both
// commit, and a group that still loses a deadlock runs again by itself.
// Each interleaving is made, not hoped for: a transaction is held at a
// point (an advisory lock a trigger takes, a promise its work awaits) and
// released once the other is seen waiting in pg_stat_activity.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { PostgresIngestStore } from '../../../api/box-logs/ingest-store-postgres.js';
import { ControlAnswers } from '../../../api/control/settle.js';
import { setAccessSigned } from '../../../api/control/operations.js';
import { GroupCommit } from '../../../api/db/group-commit.js';
import { RACE_ATTEMPTS } from '../../../api/db/lost-race.js';
import type { PostgresStore, Store } from '../../../api/db/store.js';
import type { StoredBoxLog } from '../../../api/box-logs/repository.js';
import {
  Barrier,
  Direction,
  FrameKind,
  Status,
  generateIssuerKeyPair,
  parseResponse,
  sealCommand,
  sealResponse,
} from '../../../firmware-protocol/index.js';
import { secondStore } from '../../helpers/second-store.js';
import { insertBox, insertParking } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);
const NOW = Date.UTC(2026, 10, 27, 12);
const MODULE = 7_301;

function postgres(store: Store): PostgresStore {
  if (store.dialect !== 'postgres') throw new Error('PostgreSQL only');
  return store;
}

/** Resolves once `count` backends of this database wait on a lock (5 s at most). */
async function waitersOnLocks(t: ExecutionContext, store: Store, count: number): Promise<void> {
  for (let spin = 0; spin < 500; spin++) {
    const row = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(store.kysely);
    if ((row.rows[0]?.n ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.fail(`${count} transactions never waited on a lock`);
}

/** A verified box log of MODULE with this box_seq, as ingestion stores it. */
function verifiedLog(parkingId: number, boxSeq: number): StoredBoxLog {
  return {
    source: 'mqtt',
    entry: {
      fo_user_id: null,
      smart_key_id: null,
      equipment_id: MODULE,
      secured_parking_id: parkingId,
      type: 'control',
      command: null,
      command_decrypted: null,
      response: null,
      response_decrypted: null,
      offline: false,
      created_at: '2026-11-27 12:00:00',
      point_attributes: null,
    },
    verified: true,
    boxSeq,
    status: Status.OK,
    receivedAt: NOW,
    messageDigest: null,
  };
}

async function parkingWithBox(store: Store): Promise<number> {
  const parkingId = await insertParking(store, { created_at: NOW });
  await insertBox(store, { moduleId: MODULE, parkingId, createdAt: NOW });
  return parkingId;
}

storeTest.on(
  'postgres',
  'two groups storing the same verified logs in opposite orders wait for each other and both commit (no deadlock on the unique index)',
  async (t, store) => {
    const pg = postgres(store);
    const parkingId = await parkingWithBox(store);
    // The first group stops before its log of box_seq 2 while an advisory lock is held, holding box_seq 1.
    await sql`CREATE FUNCTION hold_first_group() RETURNS trigger AS $$
      BEGIN
        IF NEW.box_seq = 2 AND current_setting('application_name') = 'first' THEN
          PERFORM pg_advisory_xact_lock(7301);
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`.execute(store.kysely);
    await sql`CREATE TRIGGER hold_first_group BEFORE INSERT ON box_logs
      FOR EACH ROW EXECUTE FUNCTION hold_first_group()`.execute(store.kysely);
    const holder = secondStore(t, store);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = holder.kysely.connection().execute(async (connection) => {
      await sql`SELECT pg_advisory_lock(7301)`.execute(connection);
      locked();
      await released;
      await sql`SELECT pg_advisory_unlock(7301)`.execute(connection);
    });
    await isLocked;

    const ingest = new PostgresIngestStore(pg);
    const group = (name: string, order: number[]) =>
      store.kysely.transaction().execute(async (trx) => {
        await sql`SELECT set_config('application_name', ${name}, true)`.execute(trx);
        return ingest.insertLogs(
          trx,
          order.map((boxSeq) => verifiedLog(parkingId, boxSeq)),
        );
      });
    const first = group('first', [1, 2]);
    await waitersOnLocks(t, store, 1);
    const second = group('second', [2, 1]);
    await waitersOnLocks(t, store, 2);
    release();
    const [a, b] = await Promise.all([first, second]);
    await holding;
    t.deepEqual(
      a.map((row) => row.duplicate),
      [false, false],
    );
    t.deepEqual(
      b.map((row) => row.duplicate),
      [true, true],
      'the second finds both stored',
    );
    t.deepEqual(
      b.map((row) => row.id),
      [a[1]?.id, a[0]?.id],
    );
  },
);

storeTest.on(
  'postgres',
  "a box's answer completing set-access and set-access --force on the same parking both commit (the parking's lock does not wait for its foreign keys)",
  async (t, store) => {
    const pg = postgres(store);
    const next = generateIssuerKeyPair();
    const parkingId = await insertParking(store, {
      created_at: NOW,
      issuer_next_public_key: next.publicKey.toString('hex'),
      issuer_next_private_key: next.privateKey.toString('hex'),
    });
    const boxKey = randomBytes(16);
    await insertBox(store, { moduleId: MODULE, parkingId, createdAt: NOW, boxKey: boxKey.toString('hex') });
    const frame = sealCommand({
      kind: FrameKind.SET_ISSUER,
      key: boxKey,
      keyId: 7,
      scope: MODULE,
      body: { issuerKey: next.publicKey, issuerKeyPrevious: null },
    });
    await store.kysely
      .insertInto('control_commands')
      .values({
        module_id: MODULE,
        kind: 'SET_ISSUER',
        body: JSON.stringify({ issuer_key: next.publicKey.toString('hex'), issuer_key_previous: null }),
        operation: 'set_access:1',
        purpose: 'set_access',
        parking_id: parkingId,
        requested_by: 'test',
        control_seq: 7,
        sent_nonce: frame.subarray(10, 22).toString('hex'),
        in_flight_until: NOW + 30_000,
        next_attempt_at: NOW,
        created_at: NOW,
      })
      .execute();
    const answer = parseResponse(
      sealResponse(
        {
          status: Status.OK,
          kind: FrameKind.SET_ISSUER,
          moduleId: MODULE,
          keyId: 7,
          boxSeq: 1,
          boxTime: NOW / 1000,
          batteryMv: 3_700,
          barrier: Barrier.CLOSED,
          direction: Direction.CONTROL,
          remaining: 0xff,
        },
        boxKey,
        frame,
      ),
    );

    // Ingestion: the box log first (its foreign key takes the parking's row KEY SHARE), then the settle.
    let proceed: () => void = () => undefined;
    const mayProceed = new Promise<void>((resolve) => (proceed = resolve));
    let stored: () => void = () => undefined;
    const isStored = new Promise<void>((resolve) => (stored = resolve));
    const ingestion = store.kysely.transaction().execute(async (trx) => {
      await new PostgresIngestStore(pg).insertLogs(trx, [verifiedLog(parkingId, 1)]);
      stored();
      await mayProceed;
      await new ControlAnswers(store).settle(trx, MODULE, answer, frame.subarray(10, 22), NOW);
    });
    await isStored;
    // The operator forces the switch meanwhile, from another process.
    const operator = secondStore(t, store);
    const forced = setAccessSigned({ store: operator }, parkingId, { force: true }, NOW, 'test');
    // It either waits on the ingestion's lock or is done; the ingestion then takes the parking's lock.
    const settled = await Promise.race([forced.then(() => 'done'), waitersOnLocks(t, store, 1).then(() => 'waiting')]);
    t.is(settled, 'done', "set-access does not wait for the box log's foreign key");
    proceed();
    await Promise.all([ingestion, forced]);
    const parking = await store.kysely
      .selectFrom('secured_parkings')
      .select(['access_mode', 'issuer_public_key'])
      .where('id', '=', parkingId)
      .executeTakeFirstOrThrow();
    t.deepEqual(parking, { access_mode: 'signed', issuer_public_key: next.publicKey.toString('hex') });
    t.like(await store.kysely.selectFrom('control_commands').select('state').executeTakeFirstOrThrow(), {
      state: 'done',
    });
  },
);

storeTest.on(
  'postgres',
  'a group that loses a deadlock runs again by itself and commits; the other transaction commits too',
  async (t, store) => {
    const parkingId = await parkingWithBox(store);
    const rows = await Promise.all(
      ['a', 'b'].map((name) =>
        store.kysely
          .insertInto('users')
          .values({
            email: `${name}@example.org`,
            password_hash: 'x',
            first_name: name,
            last_name: name,
            phone: '1',
            created_at: NOW,
          })
          .returning('id')
          .executeTakeFirstOrThrow(),
      ),
    );
    const [a = 0, b = 0] = rows.map((row) => row.id);
    t.true(parkingId > 0);
    const other = secondStore(t, store);
    // The other transaction holds b, then wants a; the group holds a, then wants b, and waits first:
    // PostgreSQL's deadlock check runs first in the one that waited first, and fails it.
    let otherHoldsB: () => void = () => undefined;
    const holdsB = new Promise<void>((resolve) => (otherHoldsB = resolve));
    let groupHoldsA: () => void = () => undefined;
    const holdsA = new Promise<void>((resolve) => (groupHoldsA = resolve));
    let mayTakeA: () => void = () => undefined;
    const takeA = new Promise<void>((resolve) => (mayTakeA = resolve));
    const otherTransaction = other.kysely.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ phone: 'other' }).where('id', '=', b).execute();
      otherHoldsB();
      await takeA;
      await trx.updateTable('users').set({ phone: 'other' }).where('id', '=', a).execute();
    });
    await holdsB;
    const group = new GroupCommit(store);
    let runs = 0;
    const grouped = group.run(async (on) => {
      runs += 1;
      await on
        .updateTable('users')
        .set({ phone: `group ${runs}` })
        .where('id', '=', a)
        .execute();
      if (runs === 1) groupHoldsA();
      await on
        .updateTable('users')
        .set({ phone: `group ${runs}` })
        .where('id', '=', b)
        .execute();
      return runs;
    });
    await holdsA;
    await waitersOnLocks(t, store, 1);
    mayTakeA();
    const [ran] = await Promise.all([grouped, otherTransaction.catch((error: unknown) => error)]);
    // It lost the first run; a loaded server may make it lose one more (RACE_ATTEMPTS bounds them).
    t.true(ran >= 2 && ran <= RACE_ATTEMPTS, `the group ran ${ran} times`);
    t.is(group.raceRetries, ran - 1);
    const phones = await store.kysely.selectFrom('users').select(['id', 'phone']).orderBy('id').execute();
    t.deepEqual(
      phones.map((row) => row.phone),
      [`group ${ran}`, `group ${ran}`],
      'the group committed last',
    );
  },
);
