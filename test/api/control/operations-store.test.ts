// The control operations on both stores: revoke, set-access,
// rotate-issuer, the rotation's drops, the box status and the conformance
// run's reservation, and their races across processes (two stores on one
// database, as two API or admin processes have): one revocation queues the
// REVOKEs, one rotation or set-access of a parking wins and the other is
// refused, one process queues a drop, and no control sequence of a run's
// reservation is given to a dispatcher.
import test, { type ExecutionContext } from 'ava';
import { boxStatuses } from '../../../api/operators/box-status.js';
import { reserveControlSequences, RUN_CONTROL_SEQUENCES } from '../../../api/conformance-runs/suite-box.js';
import {
  accessStateOf,
  ControlRefusal,
  pendingControlOf,
  refuseSetAccessSealed,
  revokeSmartKey,
  rotateIssuer,
  scheduleDueDrops,
  setAccessSigned,
  type AccessResult,
} from '../../../api/control/operations.js';
import { ControlCommandRepository, type ControlBody } from '../../../api/control/repository.js';
import { ControlAnswers } from '../../../api/control/settle.js';
import { ControlSequences } from '../../../api/control/sequence.js';
import type { Store } from '../../../api/db/store.js';
import {
  Barrier,
  Direction,
  FrameKind,
  generateIssuerKeyPair,
  parseResponse,
  sealResponse,
  Status,
} from '../../../firmware-protocol/index.js';
import { secondStore } from '../../helpers/second-store.js';
import { column, value } from '../../helpers/sql.js';
import { insertBox, insertParking, insertSmartKey } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';
import { sent } from '../../helpers/control-send.js';

const storeTest = storeTests(test);

const NOW = Date.UTC(2026, 10, 23, 12);
const HOUR = 3_600_000;
const ROUNDS = 5;

/**
 * The store a second process would have: a second pool on PostgreSQL. On
 * SQLite the same store: a second connection in this process would wait for
 * the first's lock synchronously (better-sqlite3), blocking the event loop
 * the first needs to finish; the store's driver runs its transactions one at
 * a time, as SQLite's write lock does for two processes.
 */
function otherProcess(t: ExecutionContext, store: Store): Store {
  return store.dialect === 'postgres' ? secondStore(t, store) : store;
}

function sealedParking(store: Store): Promise<number> {
  return insertParking(store, { parking_key: '22'.repeat(16), created_at: NOW });
}

async function signedParking(store: Store, previous: string | null = null): Promise<{ id: number; key: string }> {
  const pair = generateIssuerKeyPair();
  const key = pair.publicKey.toString('hex');
  const id = await insertParking(store, {
    access_mode: 'signed',
    parking_key: null,
    issuer_private_key: pair.privateKey.toString('hex'),
    issuer_public_key: key,
    issuer_previous_public_key: previous,
    created_at: NOW,
  });
  return { id, key };
}

async function commandsOf(store: Store, parkingId: number) {
  return store.kysely
    .selectFrom('control_commands')
    .select(['module_id', 'kind', 'operation', 'purpose', 'body'])
    .where('parking_id', '=', parkingId)
    .orderBy('id')
    .execute();
}

const bodyOf = (body: string) => JSON.parse(body) as ControlBody;

/** Two calls at once, one on each store: which fulfilled, and the reasons of the others. */
async function together<T>(first: Promise<T>, second: Promise<T>): Promise<{ won: T[]; refused: unknown[] }> {
  const settled = await Promise.allSettled([first, second]);
  return {
    won: settled.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : [])),
    refused: settled.flatMap((each) => (each.status === 'rejected' ? [each.reason as unknown] : [])),
  };
}

function assertRefused(t: ExecutionContext, reasons: unknown[], message: RegExp): void {
  t.is(reasons.length, 1);
  const [reason] = reasons;
  t.true(reason instanceof ControlRefusal, String(reason));
  t.regex(reason instanceof Error ? reason.message : '', message);
}

storeTest(
  'revokeSmartKey: a REVOKE for each box of its list in its parking (not an expired one), once; run again it reports',
  async (t, store) => {
    const parkingId = await sealedParking(store);
    const otherParking = await sealedParking(store);
    await insertBox(store, { moduleId: 101, parkingId, createdAt: NOW });
    await insertBox(store, { moduleId: 102, parkingId, createdAt: NOW });
    await insertBox(store, { moduleId: 201, parkingId: otherParking, createdAt: NOW });
    const keyId = await insertSmartKey(store, {
      id: 7,
      parkingId,
      moduleIds: [101, 102, 201, 999],
      startTime: NOW - HOUR,
      endTime: NOW + HOUR,
    });
    const expired = await insertSmartKey(store, {
      id: 8,
      parkingId,
      moduleIds: [101],
      startTime: NOW - 3 * HOUR,
      endTime: NOW - 2 * HOUR,
    });
    const result = await revokeSmartKey({ store }, keyId, NOW, 'test');
    t.like(result, { smart_key_id: 7, revoked_at: NOW, newly_revoked: true, operation: 'revoke:7', pending: 2 });
    const until = Math.floor((NOW + HOUR) / 1000);
    t.deepEqual(
      (await commandsOf(store, parkingId)).map(({ module_id, kind, body }) => ({ module_id, kind, body })),
      [101, 102].map((moduleId) => ({
        module_id: moduleId,
        kind: 'REVOKE',
        body: JSON.stringify({ entries: [{ key_id: 7, until }] }),
      })),
    );
    const again = await revokeSmartKey({ store }, keyId, NOW + 5_000, 'test');
    t.like(again, { revoked_at: NOW, newly_revoked: false, pending: 2 });
    t.like(await revokeSmartKey({ store }, expired, NOW, 'test'), { newly_revoked: true, pending: 0 });
    await t.throwsAsync(() => revokeSmartKey({ store }, 999, NOW, 'test'), {
      instanceOf: ControlRefusal,
      message: 'no smart key with id 999',
    });
  },
);

storeTest('two processes revoking one smart key at once: one revocation, one set of REVOKEs', async (t, store) => {
  const other = otherProcess(t, store);
  const parkingId = await sealedParking(store);
  await insertBox(store, { moduleId: 101, parkingId, createdAt: NOW });
  await insertBox(store, { moduleId: 102, parkingId, createdAt: NOW });
  for (let round = 1; round <= ROUNDS; round++) {
    await insertSmartKey(store, {
      id: round,
      parkingId,
      moduleIds: [101, 102],
      startTime: NOW,
      endTime: NOW + HOUR,
    });
    const { won } = await together(
      revokeSmartKey({ store }, round, NOW + round, 'first'),
      revokeSmartKey({ store: other }, round, NOW + round, 'second'),
    );
    t.is(won.filter((result) => result.newly_revoked).length, 1, `round ${round}`);
    const commands = await new ControlCommandRepository(store).listOfOperation(`revoke:${round}`);
    t.deepEqual(
      commands.map((command) => command.module_id),
      [101, 102],
    );
    t.is(new Set(commands.map((command) => command.requested_by)).size, 1, 'both queued by the one that revoked');
  }
});

storeTest(
  'setAccessSigned: SET_ISSUER(next, none) to every box, the parking switches once the step is taken; refusals',
  async (t, store) => {
    const parkingId = await sealedParking(store);
    await insertBox(store, { moduleId: 101, parkingId, createdAt: NOW });
    await insertBox(store, { moduleId: 102, parkingId, createdAt: NOW });
    const started = await setAccessSigned({ store }, parkingId, { force: false }, NOW, 'test');
    t.like(started, { parking_id: parkingId, access_mode: 'sealed', issuer_public_key: null, pending: 2 });
    const state = await accessStateOf(store, parkingId);
    t.like(state, { access_mode: 'sealed', switching: true });
    const commands = await commandsOf(store, parkingId);
    t.deepEqual(
      commands.map((command) => [command.module_id, command.purpose, command.operation]),
      [101, 102].map((moduleId) => [moduleId, 'set_access', started.operation]),
    );
    await t.throwsAsync(() => setAccessSigned({ store }, parkingId, { force: false }, NOW, 'test'), {
      message: /already moving to signed/,
    });
    await t.throwsAsync(() => rotateIssuer({ store }, parkingId, NOW, 'test'), { message: /still moving to signed/ });
    const forced = await setAccessSigned({ store }, parkingId, { force: true }, NOW, 'test');
    t.is(forced.operation, started.operation);
    t.like(forced, { access_mode: 'signed' });
    t.like(await accessStateOf(store, parkingId), { access_mode: 'signed', switching: false });
    await t.throwsAsync(() => setAccessSigned({ store }, parkingId, { force: false }, NOW, 'test'), {
      message: /already signed/,
    });
    await t.throwsAsync(() => refuseSetAccessSealed(store, parkingId), { message: /going back to sealed/ });
    const sealed = await sealedParking(store);
    await t.throwsAsync(() => refuseSetAccessSealed(store, sealed), { message: /already sealed/ });
    await t.throwsAsync(() => setAccessSigned({ store }, 999, { force: false }, NOW, 'test'), {
      instanceOf: ControlRefusal,
      message: 'no secured parking with id 999',
    });
    t.is(await accessStateOf(store, 999), undefined);
  },
);

storeTest(
  'a parking without boxes: set-access and a rotation take effect at once; the previous key is dropped by scheduleDueDrops',
  async (t, store) => {
    const parkingId = await sealedParking(store);
    const signed = await setAccessSigned({ store }, parkingId, { force: false }, NOW, 'test');
    t.like(signed, { access_mode: 'signed', pending: 0 });
    const first = signed.issuer_public_key ?? '';
    const rotated = await rotateIssuer({ store }, parkingId, NOW, 'test');
    t.not(rotated.issuer_public_key, first);
    t.like(await accessStateOf(store, parkingId), { issuer_previous_public_key: first, switching: false });
    await insertSmartKey(store, {
      id: 1,
      parkingId,
      moduleIds: [],
      startTime: NOW,
      endTime: NOW + HOUR,
      signedBy: first.toUpperCase(),
    });
    t.deepEqual(await scheduleDueDrops(store, NOW), [], 'a key signed by the previous one is still valid');
    const later = NOW + HOUR + 120_000 + 1;
    t.deepEqual(await scheduleDueDrops(store, later), [
      `rotate_drop:${parkingId}:${(rotated.issuer_public_key ?? '').slice(0, 16)}`,
    ]);
    t.like(await accessStateOf(store, parkingId), { issuer_previous_public_key: null });
    t.deepEqual(await scheduleDueDrops(store, later), []);
  },
);

storeTest(
  'two processes rotating one parking at once: one rotation, the other refused as under way',
  async (t, store) => {
    const other = otherProcess(t, store);
    for (let round = 1; round <= ROUNDS; round++) {
      const { id: parkingId, key } = await signedParking(store);
      await insertBox(store, { moduleId: round * 10 + 1, parkingId, createdAt: NOW });
      await insertBox(store, { moduleId: round * 10 + 2, parkingId, createdAt: NOW });
      const { won, refused } = await together<AccessResult>(
        rotateIssuer({ store }, parkingId, NOW, 'first'),
        rotateIssuer({ store: other }, parkingId, NOW, 'second'),
      );
      t.is(won.length, 1, `round ${round}`);
      assertRefused(t, refused, /rotation of parking \d+ is under way/);
      const commands = await commandsOf(store, parkingId);
      t.deepEqual(
        commands.map((command) => command.operation),
        [won[0]?.operation, won[0]?.operation],
      );
      const state = await accessStateOf(store, parkingId);
      t.like(state, { issuer_public_key: key, switching: true });
      t.true(
        commands.every(
          (command) =>
            'issuer_key' in bodyOf(command.body) &&
            (bodyOf(command.body) as { issuer_key_previous: string | null }).issuer_key_previous === key,
        ),
      );
    }
  },
);

storeTest('two processes moving one parking to signed at once: one operation, the other refused', async (t, store) => {
  const other = otherProcess(t, store);
  for (let round = 1; round <= ROUNDS; round++) {
    const parkingId = await sealedParking(store);
    await insertBox(store, { moduleId: round * 10 + 1, parkingId, createdAt: NOW });
    const { won, refused } = await together<AccessResult>(
      setAccessSigned({ store }, parkingId, { force: false }, NOW, 'first'),
      setAccessSigned({ store: other }, parkingId, { force: false }, NOW, 'second'),
    );
    t.is(won.length, 1, `round ${round}`);
    assertRefused(t, refused, /already moving to signed/);
    t.deepEqual(
      (await commandsOf(store, parkingId)).map((command) => command.operation),
      [won[0]?.operation],
    );
  }
});

storeTest(
  'two processes scheduling the drops at once: one queues SET_ISSUER(current, none), once per box',
  async (t, store) => {
    const other = otherProcess(t, store);
    for (let round = 1; round <= ROUNDS; round++) {
      const { id: parkingId, key } = await signedParking(store, generateIssuerKeyPair().publicKey.toString('hex'));
      await insertBox(store, { moduleId: round * 10 + 1, parkingId, createdAt: NOW });
      await insertBox(store, { moduleId: round * 10 + 2, parkingId, createdAt: NOW });
      const [first, second] = await Promise.all([scheduleDueDrops(store, NOW), scheduleDueDrops(other, NOW)]);
      const operation = `rotate_drop:${parkingId}:${key.slice(0, 16)}`;
      t.deepEqual([...first, ...second], [operation], `round ${round}`);
      const commands = await commandsOf(store, parkingId);
      t.deepEqual(
        commands.map((command) => [command.module_id, command.operation, bodyOf(command.body)]),
        [round * 10 + 1, round * 10 + 2].map((moduleId) => [
          moduleId,
          operation,
          { issuer_key: key, issuer_key_previous: null },
        ]),
      );
      // Settled, so the next round's parking is the only one due.
      await store.kysely
        .updateTable('secured_parkings')
        .set({ issuer_previous_public_key: null })
        .where('id', '=', parkingId)
        .execute();
    }
  },
);

storeTest(
  'boxStatuses and pendingControlOf: what each box last told, its availability and pending commands',
  async (t, store) => {
    const parkingId = await sealedParking(store);
    const empty = await sealedParking(store);
    await insertBox(store, { moduleId: 102, parkingId, createdAt: NOW });
    await insertBox(store, { moduleId: 101, parkingId, createdAt: NOW });
    await store.kysely
      .updateTable('boxes')
      .set({ last_seen_at: NOW, battery_mv: 3456, last_box_seq: 9, next_control_seq: 12 })
      .where('module_id', '=', 101)
      .execute();
    await store.kysely
      .insertInto('box_availability')
      .values({
        module_id: 101,
        availability: 'offline',
        reason: 'gone',
        since: NOW,
        gateway_id: 'gw-1',
        updated_at: NOW,
      })
      .execute();
    await setAccessSigned({ store }, parkingId, { force: false }, NOW, 'test');
    const statuses = await boxStatuses(store, { parkingId }, NOW);
    t.deepEqual(
      statuses.map((status) => status.module_id),
      [101, 102],
    );
    t.like(statuses[0], {
      parking_id: parkingId,
      direction: 'entrance',
      last_seen_at: new Date(NOW).toISOString(),
      battery_mv: 3456,
      last_box_seq: 9,
      next_control_seq: 12,
      availability: 'offline',
      availability_reason: 'gone',
      availability_since: new Date(NOW).toISOString(),
      gateway_id: 'gw-1',
    });
    t.like(statuses[1], { last_seen_at: null, availability: 'unknown', availability_since: null, gateway_id: null });
    t.is(statuses[0]?.pending_control_commands.length, 1);
    t.like(statuses[0]?.pending_control_commands[0], {
      kind: 'SET_ISSUER',
      purpose: 'set_access',
      attempts: 0,
      created_at: new Date(NOW).toISOString(),
    });
    t.deepEqual(await pendingControlOf(store, 101), statuses[0]?.pending_control_commands);
    t.deepEqual(await boxStatuses(store, { moduleId: 102 }, NOW), [statuses[1]]);
    t.deepEqual(
      (await boxStatuses(store, {}, NOW)).map((status) => status.module_id),
      [101, 102],
    );
    t.deepEqual(await boxStatuses(store, { parkingId: empty }, NOW), []);
    await t.throwsAsync(() => boxStatuses(store, { moduleId: 7 }, NOW), { message: 'no box with module id 7' });
    await t.throwsAsync(() => boxStatuses(store, { parkingId: 999 }, NOW), {
      message: 'no secured parking with id 999',
    });
  },
);

storeTest(
  "a conformance run's reservation against a dispatcher's sequences at once: no sequence given twice",
  async (t, store) => {
    const other = otherProcess(t, store);
    const parkingId = await sealedParking(store);
    await insertBox(store, { moduleId: 101, parkingId, createdAt: NOW });
    const sequences = new ControlSequences(other);
    for (let round = 1; round <= ROUNDS; round++) {
      const [first, taken] = await Promise.all([
        reserveControlSequences(store, 101),
        Promise.all(Array.from({ length: 8 }, () => sequences.next(101))),
      ]);
      const reserved = (seq: number | undefined) =>
        seq !== undefined && seq >= first && seq < first + RUN_CONTROL_SEQUENCES;
      t.deepEqual(taken.filter(reserved), [], `round ${round}: first ${first}`);
      t.is(new Set(taken).size, taken.length);
    }
    const next = await sequences.next(101);
    t.true(next !== undefined && next > 0);
    await t.throwsAsync(() => reserveControlSequences(store, 999), { message: 'no box with module id 999' });
    await store.kysely
      .updateTable('boxes')
      .set({ next_control_seq: 2 ** 32 - 100 })
      .execute();
    await t.throwsAsync(() => reserveControlSequences(store, 101), { message: /too few control sequences/ });
    await store.kysely
      .updateTable('boxes')
      .set({ next_control_seq: 2 ** 32 })
      .execute();
    await t.throwsAsync(() => reserveControlSequences(store, 101), { message: /used every control sequence/ });
  },
);

storeTest(
  'the last two answers of a rotation settled at once in two transactions (two processes): the parking takes the step once, whichever commits last',
  async (t, store) => {
    const other = otherProcess(t, store);
    const parking = await signedParking(store);
    await insertBox(store, { moduleId: 101, parkingId: parking.id, createdAt: NOW });
    await insertBox(store, { moduleId: 102, parkingId: parking.id, createdAt: NOW });
    await rotateIssuer({ store }, parking.id, NOW, 'test');
    const next = await value<string>(
      store,
      'SELECT issuer_next_public_key FROM secured_parkings WHERE id = ?',
      parking.id,
    );
    t.truthy(next);
    const commands = new ControlCommandRepository(store);
    for (const moduleId of [101, 102]) {
      const head = await commands.headOf(moduleId, NOW);
      t.true(await commands.claim(head?.id ?? 0, sent(1), NOW, NOW + 2_000, { evenIfBackingOff: false }));
    }
    // Each box's verified OK to its SET_ISSUER (sequence 1).
    const okOf = (moduleId: number) =>
      parseResponse(
        sealResponse(
          {
            status: Status.OK,
            kind: FrameKind.SET_ISSUER,
            moduleId,
            keyId: 1,
            boxSeq: 1,
            boxTime: NOW / 1000,
            batteryMv: 3_700,
            barrier: Barrier.CLOSED,
            direction: Direction.ENTRANCE,
            remaining: 0xff,
          },
          Buffer.alloc(16, 7),
          null,
        ),
      );
    // The first answer's transaction stays open until the second's has started.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstSettled: () => void = () => undefined;
    const settledFirst = new Promise<void>((resolve) => (firstSettled = resolve));
    const first = store.kysely.transaction().execute(async (trx) => {
      await new ControlAnswers(store).settle(trx, 101, okOf(101), sent(1).nonce, NOW + 1_000);
      firstSettled();
      await held;
    });
    await settledFirst;
    const second = other.kysely
      .transaction()
      .execute((trx) => new ControlAnswers(other).settle(trx, 102, okOf(102), sent(1).nonce, NOW + 1_000));
    // Time for the second to reach its lock (PostgreSQL) or its turn (SQLite).
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await Promise.all([first, second]);
    t.deepEqual(await column(store, 'SELECT state FROM control_commands ORDER BY module_id'), ['done', 'done']);
    t.like(await accessStateOf(store, parking.id), {
      issuer_public_key: next,
      issuer_previous_public_key: parking.key,
      switching: false,
    });
  },
);
