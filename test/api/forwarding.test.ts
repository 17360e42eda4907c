// Forwarding (spec 6, issue 5) to real local HTTP servers: signed JSON arrays
// of spec 2.2 records, retries with backoff on the injected clock, a receiver
// that fails then recovers, one that hangs past the timeout, one that answers
// 301, dead letters and their revival, and a restart with deliveries pending.
import { createHmac } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { verifySignature } from '../../api/forwarding/signature.js';
import { join } from 'node:path';
import { openDatabase } from '../../api/db/open.js';
import { OutboxRepository } from '../../api/forwarding/outbox.js';
import { DRIVER, loggedIn, tempDir, testApp, type TestApp } from '../helpers/api-app.js';
import { boxAnswer, boxLog, countRows, postBoxLogs } from '../helpers/box-logs.js';
import type { AccessMode } from '../../api/repositories/parkings.js';
import { ACCESS_MODES, createSession, seedParking, type SeededParking } from '../helpers/parking.js';
import { fail, hang, ok, redirect, startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'forwarding-secret-for-tests';

interface Setup {
  app: TestApp;
  token: string;
  parking: SeededParking;
  keyId: number;
  command: Buffer;
}

async function setup(t: ExecutionContext, receiver: Receiver, options: { dir?: string; maxAgeHours?: number; startForwarding?: boolean; accessMode?: AccessMode } = {}): Promise<Setup> {
  const app = await testApp(t, { tokenTtlSeconds: 86_400, forwardingMaxAgeHours: options.maxAgeHours ?? 72 }, { dir: options.dir, startForwarding: options.startForwarding ?? false });
  const tokens = await loggedIn(app);
  const parking = seedParking(app, { accessMode: options.accessMode ?? 'sealed' });
  app.ctx.parkings.setForwarding(parking.id, receiver.url, true, SECRET);
  const body = (await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })).json<{ smart_key: { id: number; access_command: string } }>();
  return { app, token: tokens.access_token, parking, keyId: body.smart_key.id, command: Buffer.from(body.smart_key.access_command, 'base64') };
}

let second = 0;
/** `count` logs, each with its own created_at so the receiver can tell them apart. */
function logs(s: Setup, count: number, verified = true) {
  return Array.from({ length: count }, () => {
    second += 1;
    const createdAt = new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString().slice(0, 19).replace('T', ' ');
    return boxLog({ foUserId: 1, smartKeyId: s.keyId, box: s.parking.entrance, parkingId: s.parking.id, command: s.command, response: verified ? boxAnswer(s.parking.entrance, s.command) : null, createdAt });
  });
}

async function send(s: Setup, entries: ReturnType<typeof logs>): Promise<void> {
  const response = await postBoxLogs(s.app, s.token, { box_logs: entries });
  if (response.statusCode !== 201) throw new Error(response.body);
}

const records = (receiver: Receiver) => receiver.received.flatMap((request) => JSON.parse(request.body) as Record<string, unknown>[]);

for (const accessMode of ACCESS_MODES) {
  test(`a JSON array of 2.2 records with email, signed with HMAC-SHA256 of "t.body", with a delivery id (${accessMode} parking)`, async (t) => {
    const receiver = await startReceiver(t);
    const s = await setup(t, receiver, { accessMode });
    t.is(s.command[1], s.parking.accessKind);
    s.app.ctx.parkings.setForwarding(s.parking.id, receiver.url, true, SECRET, { forwardUnverified: true });
    const sent = [...logs(s, 1), ...logs(s, 1, false)];
    await send(s, sent);
    t.is(countRows(s.app, 'forwarding_outbox'), 2, 'queued in the same transaction');
    t.is(await s.app.ctx.forwarding.runOnce(), 1);
    t.is(receiver.received.length, 1);
    const [request] = receiver.received;
    if (!request) return;
    t.is(request.headers['content-type'], 'application/json');
    t.regex(String(request.headers['x-parkbench-delivery']), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const signature = String(request.headers['x-parkbench-signature']);
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
    t.truthy(match);
    t.is(Number(match?.[1]), s.app.clock.now() / 1000, 'unix seconds of the injected clock');
    t.is(match?.[2], createHmac('sha256', SECRET).update(`${match?.[1]}.${request.body}`).digest('hex'));
    t.true(verifySignature(SECRET, request.body, signature, s.app.clock.now() / 1000));
    t.false(verifySignature('wrong secret', request.body, signature, s.app.clock.now() / 1000));
    const body = JSON.parse(request.body) as Record<string, unknown>[];
    t.true(Array.isArray(body), 'no wrapper');
    t.deepEqual(body, sent.map(({ box_log }, index) => ({ ...box_log, email: DRIVER.email, verified: index === 0 })));
    t.deepEqual(Object.keys(body[0] ?? {}), [
      'fo_user_id', 'smart_key_id', 'equipment_id', 'secured_parking_id', 'type', 'command', 'command_decrypted',
      'response', 'response_decrypted', 'offline', 'created_at', 'point_attributes', 'email', 'verified',
    ]);
    t.like(s.app.ctx.outbox.status()[0], { url: receiver.url, pending: 0, delivered: 2, dead: 0, last_error: null });
  });
}

/** What a driver with no session can invent: no smart key, no box answer. */
function forged(s: Setup) {
  return boxLog({ foUserId: 1, smartKeyId: null, box: s.parking.entrance, parkingId: s.parking.id, command: null, response: null, createdAt: '2026-01-01 00:00:00' });
}

test('by default only verified logs are forwarded: an invented one is stored but never queued', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t, receiver);
  s.app.ctx.parkings.setForwarding(s.parking.id, receiver.url, true, SECRET);
  const invented = forged(s);
  invented.box_log.command_decrypted = 'ACCESS key=999 (forged)';
  const [real] = logs(s, 1);
  await send(s, [invented, real as (typeof invented)]);
  t.is(countRows(s.app, 'box_logs'), 2, 'both stored');
  t.is(countRows(s.app, 'forwarding_outbox'), 1, 'only the verified one queued');
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  const sent = records(receiver);
  t.is(sent.length, 1);
  t.like(sent[0], { verified: true, response: real?.box_log.response });
  t.false(receiver.received.some((request) => request.body.includes('forged')));
});

test('--forward-unverified: unverified logs are forwarded too, each record saying verified false', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t, receiver);
  s.app.ctx.parkings.setForwarding(s.parking.id, receiver.url, true, SECRET, { forwardUnverified: true });
  const [real] = logs(s, 1);
  await send(s, [forged(s), real as ReturnType<typeof forged>]);
  t.is(countRows(s.app, 'forwarding_outbox'), 2);
  await s.app.ctx.forwarding.runOnce();
  t.deepEqual(records(receiver).map((record) => record.verified), [false, true]);
});

test('nothing is queued when the parking does not expose its logs or has no URL', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t, receiver);
  s.app.ctx.parkings.setForwarding(s.parking.id, receiver.url, false, SECRET);
  await send(s, logs(s, 2));
  t.is(countRows(s.app, 'forwarding_outbox'), 0);
  t.is(await s.app.ctx.forwarding.runOnce(), 0);
});

test('a receiver that fails then recovers: retried with backoff on the clock, same delivery id and body, nothing lost', async (t) => {
  const receiver = await startReceiver(t, [fail, fail, ok]);
  const s = await setup(t, receiver);
  await send(s, logs(s, 3));
  await s.app.ctx.forwarding.runOnce();
  t.like(s.app.ctx.outbox.status()[0], { pending: 3, delivered: 0, last_error: 'HTTP 500' });
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'not due again at once');
  s.app.clock.advance(5_000); // the first retry comes within 2.5 to 5 s
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  t.is(await s.app.ctx.forwarding.runOnce(), 0, 'the second retry waits longer');
  s.app.clock.advance(10_000);
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, 3);
  t.is(new Set(receiver.received.map((r) => r.headers['x-parkbench-delivery'])).size, 1, 'one delivery id across retries');
  t.is(new Set(receiver.received.map((r) => r.body)).size, 1, 'the same records');
  t.like(s.app.ctx.outbox.status()[0], { pending: 0, delivered: 3, dead: 0 });
});

test('a receiver that hangs past the 10 s timeout (on the injected clock) is retried', async (t) => {
  const receiver = await startReceiver(t, [hang, ok]);
  const s = await setup(t, receiver);
  await send(s, logs(s, 1));
  let finished = false;
  const pass = s.app.ctx.forwarding.runOnce().then(() => {
    finished = true;
  });
  await receiver.waitFor(1);
  // The timeout is a timer on the injected clock: the negative is proved by
  // that timer still pending at 9,999 ms (the receiver hangs, nothing else
  // can end the pass), and its firing at 10 s is the positive.
  const pending = s.app.clock.pendingTimers;
  t.true(pending > 0, 'the timeout is on the injected clock');
  s.app.clock.advance(9_999);
  t.is(s.app.clock.pendingTimers, pending, 'no timer fell due before 10 s');
  t.false(finished, 'still waiting before 10 s');
  s.app.clock.advance(1);
  t.is(s.app.clock.pendingTimers, pending - 1, 'the timeout fired at 10 s');
  await pass;
  t.like(s.app.ctx.outbox.status()[0], { pending: 1, last_error: 'timeout after 10 s' });
  s.app.clock.advance(5_000);
  await s.app.ctx.forwarding.runOnce();
  t.like(s.app.ctx.outbox.status()[0], { pending: 0, delivered: 1 });
});

test('301 is not delivery and is not followed', async (t) => {
  const receiver = await startReceiver(t, [redirect]);
  const s = await setup(t, receiver);
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, 1, 'the redirect target got nothing');
  t.like(s.app.ctx.outbox.status()[0], { pending: 1, delivered: 0, last_error: 'HTTP 301' });
});

test('past FORWARDING_MAX_AGE_HOURS a delivery is dead; retry revives it', async (t) => {
  const receiver = await startReceiver(t, [fail]);
  const s = await setup(t, receiver, { maxAgeHours: 1 });
  await send(s, logs(s, 2));
  await s.app.ctx.forwarding.runOnce();
  for (let i = 0; i < 12; i += 1) {
    s.app.clock.advance(10 * 60_000);
    await s.app.ctx.forwarding.runOnce();
  }
  t.like(s.app.ctx.outbox.status()[0], { pending: 0, delivered: 0, dead: 2, last_error: 'HTTP 500' });
  const attempts = receiver.received.length;
  s.app.clock.advance(24 * 3_600_000);
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, attempts, 'dead stays dead');
  receiver.answers = [ok];
  t.is(s.app.ctx.outbox.revive(s.parking.id, s.app.clock.now()), 1);
  await s.app.ctx.forwarding.runOnce();
  t.like(s.app.ctx.outbox.status()[0], { pending: 0, delivered: 2, dead: 0 });
});

test('up to 100 records a request, for one URL', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t, receiver);
  await send(s, logs(s, 250));
  t.is(await s.app.ctx.forwarding.runOnce(), 3);
  t.deepEqual(receiver.received.map((r) => (JSON.parse(r.body) as unknown[]).length).sort(), [100, 100, 50]);
  t.is(new Set(records(receiver).map((record) => record.created_at)).size, 250);
});

/** Steps the fake clock a second at a time, letting real I/O (the local
 * receiver) happen in between, until `done` holds. */
async function stepUntil(app: TestApp, done: () => boolean, maxSteps = 100): Promise<boolean> {
  for (let step = 0; step < maxSteps; step += 1) {
    if (done()) return true;
    await app.clock.advanceAsync(1_000);
    await new Promise((resolve) => setTimeout(resolve, 10)); // real I/O of the local receiver
  }
  return done();
}

test('the worker started by buildApp delivers on its own, on the injected clock', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t, receiver, { startForwarding: true });
  await send(s, logs(s, 4));
  t.true(await stepUntil(s.app, () => s.app.ctx.outbox.status()[0]?.delivered === 4));
});

test('a restart with deliveries pending (one cut short in flight) loses nothing', async (t) => {
  const receiver = await startReceiver(t, [fail]);
  const dir = tempDir(t);
  const first = await setup(t, receiver, { dir, startForwarding: true });
  await send(first, logs(first, 3));
  t.true(await stepUntil(first.app, () => receiver.received.length >= 1), 'the first attempt: HTTP 500');
  receiver.answers = [hang];
  await send(first, logs(first, 2));
  t.true(await stepUntil(first.app, () => receiver.received.length >= 2, 5), 'the next attempt hangs in flight');
  await first.app.app.close(); // aborts it; nothing was delivered
  const db = openDatabase(join(dir, 'db', 'test.sqlite'));
  t.like(new OutboxRepository(db).status()[0], { pending: 5, delivered: 0 }, 'all still pending in the file');
  db.close();

  receiver.answers = [ok];
  const before = receiver.received.length;
  const second = await testApp(t, { tokenTtlSeconds: 86_400 }, { dir, startForwarding: true });
  t.true(await stepUntil(second, () => second.ctx.outbox.status()[0]?.delivered === 5));
  t.like(second.ctx.outbox.status()[0], { pending: 0, delivered: 5, dead: 0 });
  const delivered = receiver.received.slice(before).flatMap((request) => JSON.parse(request.body) as { created_at: string }[]);
  t.is(new Set(delivered.map((record) => record.created_at)).size, 5, 'every log, at least once');
});
