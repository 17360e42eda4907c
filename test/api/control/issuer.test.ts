// set-access and rotate-issuer end to end: the real API on a fake
// clock, real simulated boxes on MQTT. A sealed parking moves to signed only
// once every box holds the new key, and a frame signed by it then opens
// them; a rotation installs (new, current), signs with the new key once all
// boxes have it, and drops the previous key (new, none) once no key it
// signed is valid, on the fake clock. A box added meanwhile gets its keys
// from its provisioning file and needs no SET_ISSUER.
import test from 'ava';
import {
  refuseSetAccessSealed,
  rotateIssuer,
  scheduleDueDrops,
  setAccessSigned,
} from '../../../api/control/operations.js';
import { parseResponse, signAccessCommand, statusName } from '../../../firmware-protocol/index.js';
import type { SimulatedBox } from '../../../simulator/simulated-box.js';
import { loggedIn, me, testApp, type TestApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { addParking, controlApp, provisioningOf, pumpUntil, startBox, statesOf } from '../../helpers/control-bench.js';
import { all, run, value } from '../../helpers/sql.js';

/** An ACCESS_SIGNED of key 77, valid around now, for these boxes, signed by `privateKeyHex`. */
function signedFrame(app: TestApp, parkingId: number, moduleIds: number[], privateKeyHex: string, keyId = 77): Buffer {
  const now = Math.floor(app.clock.now() / 1000);
  return signAccessCommand({
    privateKey: Buffer.from(privateKeyHex, 'hex'),
    keyId,
    scope: parkingId,
    body: { notBefore: now - 60, notAfter: now + 3_600, maxEntries: 50, maxExits: 50, moduleIds },
  });
}

async function statusOf(box: SimulatedBox, command: Buffer): Promise<string | undefined> {
  const response = await box.handleCommand(command);
  return response === null ? undefined : statusName(parseResponse(response).status);
}

async function parkingOf(app: TestApp, id: number) {
  const parking = await app.ctx.parkings.findById(id);
  if (parking === undefined) throw new Error(`no parking ${id}`);
  return parking;
}

test('set-access signed: the parking switches only once every box answered OK; then a frame signed by the new key opens them', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app);
  const [entranceId = 0, exitId = 0] = parking.moduleIds;
  const entrance = await startBox(t, app, entranceId);
  const parkingKey = (await parkingOf(app, parking.id)).parking_key;

  const started = await setAccessSigned(app.ctx, parking.id, { force: false }, app.clock.now(), 'test');
  t.like(started, { access_mode: 'sealed', pending: 2 });
  const next = (await parkingOf(app, parking.id)).issuer_next_public_key;
  t.regex(next ?? '', /^[0-9a-f]{128}$/);
  await pumpUntil(
    app,
    async () => (await statesOf(app, started.operation))[entranceId] === 'done',
    'the entrance box done',
  );
  t.is((await parkingOf(app, parking.id)).access_mode, 'sealed', 'the exit box has not got the key yet');

  const exit = await startBox(t, app, exitId);
  await pumpUntil(app, async () => (await parkingOf(app, parking.id)).access_mode === 'signed', 'the switch');
  const signed = await parkingOf(app, parking.id);
  t.like(signed, {
    issuer_public_key: next,
    issuer_next_public_key: null,
    issuer_next_private_key: null,
    issuer_previous_public_key: null,
    parking_key: parkingKey,
  });
  t.deepEqual(await statesOf(app, started.operation), { [entranceId]: 'done', [exitId]: 'done' });
  const frame = signedFrame(app, parking.id, parking.moduleIds, signed.issuer_private_key ?? '');
  t.is(await statusOf(entrance.box, frame), 'OK');
  t.is(await statusOf(exit.box, frame), 'OK');
});

test('set-access --force switches at once; refusals: to the mode it has, twice under way, back to sealed', async (t) => {
  const app = await testApp(t);
  const parking = await seedParking(app);
  const forced = await setAccessSigned(app.ctx, parking.id, { force: true }, app.clock.now(), 'test');
  t.like(forced, { access_mode: 'signed', pending: 2 });
  await t.throwsAsync(() => setAccessSigned(app.ctx, parking.id, { force: false }, app.clock.now(), 'test'), {
    message: `parking ${parking.id} is already signed`,
  });

  const other = await seedParking(app);
  await setAccessSigned(app.ctx, other.id, { force: false }, app.clock.now(), 'test');
  await t.throwsAsync(() => setAccessSigned(app.ctx, other.id, { force: false }, app.clock.now(), 'test'), {
    message: /already moving to signed/,
  });
  await t.throwsAsync(() => rotateIssuer(app.ctx, other.id, app.clock.now(), 'test'), {
    message: /still moving to signed/,
  });
  await t.throwsAsync(() => refuseSetAccessSealed(app.ctx.store, other.id), { message: /is sealed|already sealed/ });
  await t.throwsAsync(() => refuseSetAccessSealed(app.ctx.store, parking.id), { message: /going back to sealed/ });
  const late = await setAccessSigned(app.ctx, other.id, { force: true }, app.clock.now(), 'test');
  t.is(late.access_mode, 'signed', '--force switches one under way');
  t.is(
    await value(app.ctx.store, 'SELECT count(*) FROM control_commands WHERE parking_id = ?', other.id),
    2,
    'nothing queued twice',
  );
});

test('rotate-issuer: (new, current) to every box, sign with the new key, then (new, none) once no key signed by the old one is valid', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { signed: true, boxes: ['entrance'] });
  const [entranceId = 0] = parking.moduleIds;
  const entrance = await startBox(t, app, entranceId);
  const old = await parkingOf(app, parking.id);
  const oldPrivate = old.issuer_private_key ?? '';
  // A key signed by the old issuer key, valid 10 more minutes.
  const token = (await loggedIn(app)).access_token;
  const userId = (await me(app, `Bearer ${token}`)).json<{ id: number }>().id;
  const endTime = app.clock.now() + 10 * 60_000;
  await run(
    app.ctx.store,
    "INSERT INTO smart_keys (id, user_id, parking_id, type, purpose, access_command, module_ids, start_time, end_time, created_at, signed_by) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM smart_keys), ?, ?, 'session_access', 'session', ?, ?, ?, ?, ?, ?)",
    userId,
    parking.id,
    Buffer.alloc(0),
    JSON.stringify(parking.moduleIds),
    app.clock.now(),
    endTime,
    app.clock.now(),
    old.issuer_public_key,
  );

  await t.throwsAsync(() => rotateIssuer(app.ctx, 99_999, app.clock.now(), 'test'), {
    message: 'no secured parking with id 99999',
  });
  const started = await rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test');
  await t.throwsAsync(() => rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test'), {
    message: /rotation of parking \d+ is under way/,
  });
  const next = (await parkingOf(app, parking.id)).issuer_next_public_key ?? '';
  // A box added during the rotation: its provisioning file holds (new, current); it gets no SET_ISSUER.
  const added = await addParkingBox(app, parking.id);
  t.deepEqual(
    [
      (await provisioningOf(app, added)).issuerKey?.toString('hex'),
      (await provisioningOf(app, added)).issuerKeyPrevious?.toString('hex'),
    ],
    [next, old.issuer_public_key],
  );
  const late = await startBox(t, app, added);

  await pumpUntil(
    app,
    async () => (await parkingOf(app, parking.id)).issuer_public_key === next,
    'signing with the new key',
  );
  t.deepEqual(await statesOf(app, started.operation), { [entranceId]: 'done' }, 'the added box needed no SET_ISSUER');
  const rotated = await parkingOf(app, parking.id);
  t.like(rotated, { issuer_previous_public_key: old.issuer_public_key, issuer_next_public_key: null });
  const newPrivate = rotated.issuer_private_key ?? '';
  for (const box of [entrance.box, late.box]) {
    t.is(
      await statusOf(box, signedFrame(app, parking.id, [box.moduleId], oldPrivate, 80)),
      'OK',
      'the old key still opens: its keys are valid',
    );
    t.is(await statusOf(box, signedFrame(app, parking.id, [box.moduleId], newPrivate, 81)), 'OK');
  }
  await t.throwsAsync(() => rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test'), {
    message: /last rotation of parking \d+ is not finished/,
  });

  // Polls before the old key's last smart key expires (+ skew) queue nothing.
  for (let step = 0; step < 5; step++) app.clock.advance(1_000);
  t.is(await value(app.ctx.store, "SELECT count(*) FROM control_commands WHERE purpose = 'rotate_drop'"), 0);
  app.clock.advanceTo(endTime + 120_000 + 1);
  await pumpUntil(
    app,
    async () => (await parkingOf(app, parking.id)).issuer_previous_public_key === null,
    'the previous key dropped',
  );
  const drops = await all<{ module_id: number; state: string; body: string }>(
    app.ctx.store,
    "SELECT module_id, state, body FROM control_commands WHERE purpose = 'rotate_drop' ORDER BY module_id",
  );
  t.deepEqual(
    drops.map((drop) => [drop.module_id, drop.state, JSON.parse(drop.body) as unknown]),
    [entranceId, added].map((moduleId) => [moduleId, 'done', { issuer_key: next, issuer_key_previous: null }]),
  );
  for (const box of [entrance.box, late.box]) {
    t.is(await statusOf(box, signedFrame(app, parking.id, [box.moduleId], oldPrivate, 82)), 'AUTH_FAILED');
    t.is(await statusOf(box, signedFrame(app, parking.id, [box.moduleId], newPrivate, 83)), 'OK');
  }
  // And a new rotation may start.
  t.like(await rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test'), { pending: 2 });
});

async function addParkingBox(app: TestApp, parkingId: number): Promise<number> {
  const other = await addParking(app, { boxes: ['exit'] });
  const moduleId = other.moduleIds[0] ?? 0;
  await run(app.ctx.store, 'UPDATE boxes SET parking_id = ? WHERE module_id = ?', parkingId, moduleId);
  return moduleId;
}

test('rotate-issuer on a sealed parking is refused in one line', async (t) => {
  const app = await testApp(t);
  const parking = await seedParking(app);
  await t.throwsAsync(() => rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test'), {
    message: `parking ${parking.id} is sealed: it has no issuer key to rotate (set-access --access signed first)`,
  });
});

test('a parking without boxes: set-access and a rotation take effect at once, and its previous key is dropped on the next poll', async (t) => {
  const app = await testApp(t);
  const parking = await seedParking(app, { boxes: [] });
  t.like(await setAccessSigned(app.ctx, parking.id, { force: false }, app.clock.now(), 'test'), {
    access_mode: 'signed',
    deliveries: [],
  });
  const first = (await parkingOf(app, parking.id)).issuer_public_key;
  await rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test');
  const rotated = await parkingOf(app, parking.id);
  t.like(rotated, { issuer_previous_public_key: first, issuer_next_public_key: null });
  t.not(rotated.issuer_public_key, first);
  await scheduleDueDrops(app.ctx.store, app.clock.now());
  t.is((await parkingOf(app, parking.id)).issuer_previous_public_key, null);
});
