// Forwarding (spec 6) to real local HTTP servers: Standard
// Webhooks deliveries of spec 2.2 records, each verified by the receiver
// with the `standardwebhooks` package; secret rotation and its overlap; a
// secret from before Standard Webhooks; batches of 100 records and 256 KiB;
// the worker started by buildApp; a restart with deliveries pending.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { openStore } from '../../../api/db/open-store.js';
import { OutboxRepository } from '../../../api/forwarding/outbox.js';
import { MAX_DELIVERY_BYTES, recordsThatFit } from '../../../api/forwarding/record.js';
import { newWebhookSecret } from '../../../api/forwarding/signature.js';
import { rotateForwardingSecret, setForwarding } from '../../../api/forwarding/parking-settings.js';
import { DRIVER, tempDir, testApp } from '../../helpers/api-app.js';
import { countRows } from '../../helpers/box-logs.js';
import {
  forwardingSetup,
  logs,
  records,
  send,
  stepUntil,
  withReceiver,
  type Forwarding,
} from '../../helpers/forwarding.js';
import { ACCESS_MODES } from '../../helpers/parking.js';
import { fail, hang, ok, startReceiver, type Received } from '../../helpers/receiver.js';
import { verifies, verifyAt } from '../../helpers/webhook-receiver.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const accessMode of ACCESS_MODES) {
  test(`a JSON array of 2.2 records with email, as Standard Webhooks: the standardwebhooks package verifies it (${accessMode} parking)`, async (t) => {
    const { s, receiver } = await withReceiver(t, undefined, { accessMode, forwardUnverified: true });
    t.is(s.command[1], s.parking.accessKind);
    t.regex(s.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and base64 of 32 random bytes');
    const sent = [...logs(s, 1), ...logs(s, 1, false)];
    await send(s, sent);
    t.is(await countRows(s.app, 'forwarding_outbox'), 2, 'queued in the same transaction');
    t.is(await s.app.ctx.forwarding.runOnce(), 1);
    const [request] = receiver.received;
    if (!request) return t.fail('nothing received');
    t.is(request.headers['content-type'], 'application/json');
    t.regex(String(request.headers['webhook-id']), UUID);
    t.is(request.headers['webhook-timestamp'], String(s.app.clock.now() / 1000), 'unix seconds of the injected clock');
    t.regex(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/, 'one secret, one signature');
    t.deepEqual(
      Object.keys(request.headers).filter((name) => name.startsWith('x-parkbench')),
      [],
      'no header of our own is left',
    );
    const body = verifyAt(s.secret, request) as Record<string, unknown>[];
    t.false(verifies(newWebhookSecret(), request), 'another secret does not verify');
    t.false(
      verifies(s.secret, { ...request, body: request.body.replace('"verified":true', '"verified":false') }),
      'nor a changed body',
    );
    t.true(Array.isArray(body), 'no wrapper');
    t.deepEqual(
      body,
      sent.map(({ box_log }, index) => ({ ...box_log, email: DRIVER.email, verified: index === 0 })),
    );
    t.deepEqual(Object.keys(body[0] ?? {}), [
      'fo_user_id',
      'smart_key_id',
      'equipment_id',
      'secured_parking_id',
      'type',
      'command',
      'command_decrypted',
      'response',
      'response_decrypted',
      'offline',
      'created_at',
      'point_attributes',
      'email',
      'verified',
    ]);
    t.like((await s.app.ctx.outbox.status())[0], {
      url: receiver.url,
      pending: 0,
      delivered: 2,
      dead: 0,
      last_error: null,
      disabled_at: null,
    });
  });
}

test('a delivery replayed later, with its old timestamp, is refused by the standardwebhooks package', async (t) => {
  const { s, receiver } = await withReceiver(t);
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  const [request] = receiver.received;
  if (!request) return t.fail('nothing received');
  t.notThrows(() => verifyAt(s.secret, request, request.receivedAt + 299_000), 'within its 5 minutes');
  t.throws(() => verifyAt(s.secret, request, request.receivedAt + 6 * 60_000), {
    message: 'Message timestamp too old',
  });
});

test('by default only verified logs are forwarded: an invented one is stored but never queued', async (t) => {
  const { s, receiver } = await withReceiver(t);
  const [real] = logs(s, 1);
  const [invented] = logs(s, 1, false, { command_decrypted: 'ACCESS key=999 (forged)' });
  if (!real || !invented) return t.fail();
  await send(s, [invented, real]);
  t.is(await countRows(s.app, 'box_logs'), 2, 'both stored');
  t.is(await countRows(s.app, 'forwarding_outbox'), 1, 'only the verified one queued');
  t.is(await s.app.ctx.forwarding.runOnce(), 1);
  t.deepEqual(
    records(receiver).map((record) => record.verified),
    [true],
  );
  t.false(receiver.received.some((request) => request.body.includes('forged')));
});

test('nothing is queued when the parking does not expose its logs', async (t) => {
  const { s, receiver } = await withReceiver(t);
  await setForwarding(s.app.ctx.store, s.parking.id, { url: receiver.url, expose: false }, s.app.clock.now());
  await send(s, logs(s, 2));
  t.is(await countRows(s.app, 'forwarding_outbox'), 0);
  t.is(await s.app.ctx.forwarding.runOnce(), 0);
});

test('the secret is shown once: a later setting keeps it and does not show it', async (t) => {
  const { s, receiver } = await withReceiver(t);
  const again = await setForwarding(
    s.app.ctx.store,
    s.parking.id,
    { url: `${receiver.url}/other`, expose: true },
    s.app.clock.now(),
  );
  t.is(again.forwarding_secret, null);
  t.is((await s.app.ctx.parkings.findById(s.parking.id))?.forwarding_secret, s.secret, 'kept across a change of URL');
});

test('a rotation: both secrets sign every delivery during the overlap (each verifies alone), then only the new one', async (t) => {
  const { s, receiver } = await withReceiver(t);
  const rotated = await rotateForwardingSecret(s.app.ctx.store, s.parking.id, 2, s.app.clock.now());
  const fresh = rotated.forwarding_secret ?? '';
  t.not(fresh, s.secret);
  t.is(rotated.previous_secret_until, new Date(s.app.clock.now() + 2 * 3_600_000).toISOString());

  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  s.app.clock.advance(2 * 3_600_000 - 1_000); // the last second of the overlap
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  s.app.clock.advance(1_000); // the overlap is over
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();

  const [first, last, after] = receiver.received;
  if (!first || !last || !after) return t.fail(`${receiver.received.length} deliveries`);
  for (const during of [first, last]) {
    t.is(String(during.headers['webhook-signature']).split(' ').length, 2, 'two signatures, space-separated');
    t.true(verifies(s.secret, during), 'a receiver still on the old secret verifies');
    t.true(verifies(fresh, during), 'a receiver on the new secret verifies');
  }
  t.is(String(after.headers['webhook-signature']).split(' ').length, 1);
  t.true(verifies(fresh, after));
  t.false(verifies(s.secret, after), 'the old secret signs no more');
});

test('a rotation with --overlap-hours 0 switches at once', async (t) => {
  const { s, receiver } = await withReceiver(t);
  const fresh = await rotateForwardingSecret(s.app.ctx.store, s.parking.id, 0, s.app.clock.now());
  t.is(fresh.previous_secret_until, null);
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  const [request] = receiver.received;
  if (!request) return t.fail();
  t.true(verifies(fresh.forwarding_secret ?? '', request));
  t.false(verifies(s.secret, request));
});

test('a secret made before Standard Webhooks (no whsec_) keeps working: the same bytes, as raw or as whsec_ + base64', async (t) => {
  const { s, receiver } = await withReceiver(t);
  const old = randomBytes(32).toString('base64url'); // what an older parkbench stored and showed
  await s.app.ctx.parkings.setForwarding(s.parking.id, receiver.url, true, old);
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  const [request] = receiver.received;
  if (!request) return t.fail();
  t.true(verifies({ raw: old }, request), "new Webhook(old, { format: 'raw' })");
  t.true(verifies(`whsec_${Buffer.from(old).toString('base64')}`, request));
});

test('up to 100 records a request, for one URL', async (t) => {
  const { s, receiver } = await withReceiver(t);
  await send(s, logs(s, 250));
  t.is(await s.app.ctx.forwarding.runOnce(), 3);
  t.deepEqual(receiver.received.map((r) => (JSON.parse(r.body) as unknown[]).length).sort(), [100, 100, 50]);
  t.is(new Set(records(receiver).map((record) => record.created_at)).size, 250);
  t.true(receiver.received.every((request) => verifies(s.secret, request)));
});

test('at most 256 KiB a request: large records go fewer to a delivery', async (t) => {
  const { s, receiver } = await withReceiver(t);
  const big = 'x'.repeat(4000);
  await send(s, logs(s, 90, true, { command_decrypted: big }));
  await s.app.ctx.forwarding.runOnce();
  const sizes = receiver.received.map((request) => Buffer.byteLength(request.body));
  t.true(
    sizes.every((size) => size <= MAX_DELIVERY_BYTES),
    `bodies of ${sizes.join(', ')} bytes`,
  );
  t.is(sizes.length, 2, 'about 4.5 KB a record: 90 records are two deliveries, not one');
  t.true((sizes[0] ?? 0) > MAX_DELIVERY_BYTES - 5_000, 'the first is filled up to the limit');
  t.is(records(receiver).length, 90, 'every record, once');
  t.true(receiver.received.every((request) => verifies(s.secret, request)));
});

test('recordsThatFit: 100 records at most, 256 KiB at most counting brackets and commas, a lone oversized record alone', (t) => {
  t.is(recordsThatFit(Array.from({ length: 150 }, () => 10)), 100);
  const each = 1000;
  const fit = Math.floor((MAX_DELIVERY_BYTES - 2 + 1) / (each + 1));
  t.is(recordsThatFit(Array.from({ length: 100 }, () => each)), Math.min(100, fit));
  t.is(recordsThatFit([MAX_DELIVERY_BYTES - 2]), 1, 'exactly the limit');
  t.is(recordsThatFit([MAX_DELIVERY_BYTES - 2, 1]), 1);
  t.is(recordsThatFit([MAX_DELIVERY_BYTES * 2, 1]), 1, 'an oversized record goes alone');
  t.is(recordsThatFit([10_000, 100_000, 100_000, 100_000]), 3);
});

test('the worker started by buildApp delivers on its own, on the injected clock', async (t) => {
  const { s } = await withReceiver(t, undefined, { startForwarding: true });
  await send(s, logs(s, 4));
  t.true(await stepUntil(s.app, async () => (await s.app.ctx.outbox.status())[0]?.delivered === 4));
});

test('a restart with deliveries pending (one cut short in flight) loses nothing', async (t) => {
  const receiver = await startReceiver(t, [fail]);
  const dir = tempDir(t);
  const first: Forwarding = await forwardingSetup(t, receiver.url, { dir, startForwarding: true });
  await send(first, logs(first, 3));
  t.true(await stepUntil(first.app, () => receiver.received.length >= 1), 'the first attempt: HTTP 500');
  receiver.answers = [hang];
  await send(first, logs(first, 2));
  t.true(await stepUntil(first.app, () => receiver.received.length >= 2, 10), 'the next attempt hangs in flight');
  await first.app.app.close(); // aborts it; nothing was delivered
  const stored = await openStore(first.app.config, { onIdleError: () => undefined });
  t.like(
    (await new OutboxRepository(stored).status())[0],
    { pending: 5, delivered: 0 },
    'all still pending in the database',
  );
  await stored.close();

  receiver.answers = [ok];
  const before = receiver.received.length;
  const second = await testApp(
    t,
    { tokenTtlSeconds: 86_400, forwardingAllowPrivate: true },
    { dir, startForwarding: true, clock: first.app.clock },
  );
  t.true(await stepUntil(second, async () => (await second.ctx.outbox.status())[0]?.delivered === 5));
  t.like((await second.ctx.outbox.status())[0], { pending: 0, delivered: 5, dead: 0 });
  const delivered: Received[] = receiver.received.slice(before);
  t.is(
    new Set(
      delivered.flatMap((request) =>
        (JSON.parse(request.body) as { created_at: string }[]).map((record) => record.created_at),
      ),
    ).size,
    5,
    'every log, at least once',
  );
});
