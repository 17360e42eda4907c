// `parkbench admin forwarding status|retry|replay` and `admin parking
// forwarding` (the secret shown once, --rotate-secret) through the real entry
// point, on a database where forwarding has delivered, died and been
// disabled by a 410.
import test from 'ava';
import { loggedIn, tempDir, testApp, type TestApp } from '../helpers/api-app.js';
import { boxAnswer, boxLog, postBoxLogs } from '../helpers/box-logs.js';
import { clockAtNow } from '../helpers/forwarding.js';
import { createSession, seedParking } from '../helpers/parking.js';
import { fail, gone, ok, startReceiver } from '../helpers/receiver.js';
import { runCli } from '../helpers/run-cli.js';
import { verifies } from '../helpers/webhook-receiver.js';

/** Passes an hour apart until nothing is pending (the schedule ends after about 76 h). */
async function untilSettled(app: TestApp): Promise<void> {
  for (
    let hour = 0;
    hour < 200 && (await app.ctx.outbox.status()).some((row) => row.pending > 0 && row.disabled_at === null);
    hour += 1
  ) {
    await app.ctx.forwarding.runOnce();
    app.clock.advance(3_600_000);
  }
}

test('status per URL (pending, delivered, dead, disabled, last error); retry revives the dead and the disabled; replay queues again', async (t) => {
  const dir = tempDir(t);
  const clock = clockAtNow();
  const good = await startReceiver(t, [ok], clock);
  const bad = await startReceiver(t, [fail]);
  const leaving = await startReceiver(t, [gone]);
  const app = await testApp(t, { tokenTtlSeconds: 86_400 * 30, forwardingAllowPrivate: true }, { dir, clock });
  const tokens = await loggedIn(app);
  const [delivered, dead, disabled] = [await seedParking(app), await seedParking(app), await seedParking(app)];
  const env = app.databaseEnv;
  for (const [parking, receiver] of [
    [delivered, good],
    [dead, bad],
    [disabled, leaving],
  ] as const) {
    await app.ctx.parkings.setForwarding(parking.id, receiver.url, true, `secret-${parking.id}`);
  }
  const session = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: delivered.id } })
  ).json<{ smart_key: { id: number; access_command: string } }>();
  const command = Buffer.from(session.smart_key.access_command, 'base64');
  const log = (parking: typeof delivered, smartKeyId: number | null) =>
    boxLog({
      foUserId: 1,
      smartKeyId,
      box: parking.entrance,
      parkingId: parking.id,
      command,
      response: boxAnswer(parking.entrance, command),
    });
  const posted = await postBoxLogs(app, tokens.access_token, {
    box_logs: [log(delivered, session.smart_key.id), log(dead, null), log(dead, null), log(disabled, null)],
  });
  t.is(posted.statusCode, 201);
  await untilSettled(app);
  await app.app.close();

  const status = await runCli(['admin', 'forwarding', 'status', '--json'], { env });
  t.is(status.code, 0, status.stderr);
  const rows = JSON.parse(status.stdout) as Record<string, unknown>[];
  t.deepEqual(
    rows.map((row) => Object.keys(row)),
    [0, 1, 2].map(() => [
      'parking_id',
      'url',
      'pending',
      'delivered',
      'dead',
      'last_error',
      'last_attempt_at',
      'disabled_at',
    ]),
  );
  t.like(rows[0], {
    parking_id: delivered.id,
    url: good.url,
    pending: 0,
    delivered: 1,
    dead: 0,
    last_error: null,
    disabled_at: null,
  });
  t.like(rows[1], {
    parking_id: dead.id,
    url: bad.url,
    pending: 0,
    delivered: 0,
    dead: 2,
    last_error: 'HTTP 500',
    disabled_at: null,
  });
  t.like(rows[2], { parking_id: disabled.id, url: leaving.url, pending: 1, delivered: 0, dead: 0 });
  t.regex(String(rows[2]?.disabled_at), /^\d{4}-\d{2}-\d{2}T/);
  t.is(bad.received.length, 10, 'ten attempts, then dead');

  const one = await runCli(['admin', 'forwarding', 'status', '--parking', String(dead.id)], { env });
  t.is(one.code, 0);
  t.regex(one.stdout, new RegExp(`parking ${dead.id}.*dead 2.*last error: HTTP 500`));
  t.notRegex(one.stdout, new RegExp(good.url));
  const gonePlain = await runCli(['admin', 'forwarding', 'status', '--parking', String(disabled.id)], { env });
  t.regex(gonePlain.stdout, /DISABLED since .* \(410 Gone; admin forwarding retry revives it\)/);

  const retry = await runCli(['admin', 'forwarding', 'retry', '--parking', String(dead.id), '--json'], { env });
  t.is(retry.code, 0, retry.stderr);
  t.deepEqual(JSON.parse(retry.stdout), { parking_id: dead.id, revived_deliveries: 1, enabled_urls: [] });
  const after = JSON.parse(
    (await runCli(['admin', 'forwarding', 'status', '--parking', String(dead.id), '--json'], { env })).stdout,
  ) as Record<string, unknown>[];
  t.like(after[0], { pending: 2, dead: 0 });
  const revived = await runCli(['admin', 'forwarding', 'retry', '--parking', String(disabled.id)], { env });
  t.is(revived.code, 0, revived.stderr);
  t.is(
    revived.stdout,
    `0 dead deliveries of parking ${disabled.id} pending again; ${leaving.url} enabled again; a running API sends them within a second\n`,
  );

  // Replay: the delivered parking's receiver lost its data; it gets it again, as a new delivery.
  const replay = await runCli(
    ['admin', 'forwarding', 'replay', '--parking', String(delivered.id), '--since', '2000-01-01T00:00:00Z', '--json'],
    { env },
  );
  t.is(replay.code, 0, replay.stderr);
  t.deepEqual(JSON.parse(replay.stdout), {
    parking_id: delivered.id,
    url: good.url,
    since: '2000-01-01T00:00:00.000Z',
    queued: 1,
  });
  const none = await runCli(
    [
      'admin',
      'forwarding',
      'replay',
      '--parking',
      String(delivered.id),
      '--since',
      new Date(Date.now() - 1000).toISOString(),
    ],
    { env },
  );
  t.regex(
    none.stdout,
    new RegExp(
      `^0 box logs of parking ${delivered.id} since .* queued again for ${good.url.replaceAll('.', '\\.')}, as new deliveries\n$`,
    ),
  );
  const second = await testApp(t, { tokenTtlSeconds: 86_400 * 30, forwardingAllowPrivate: true }, { dir, clock });
  leaving.answers = [ok];
  await second.ctx.forwarding.runOnce();
  t.is(good.received.length, 2);
  t.not(
    good.received[1]?.headers['webhook-id'],
    good.received[0]?.headers['webhook-id'],
    'a new delivery, a new webhook-id',
  );
  t.is(good.received[1]?.body, good.received[0]?.body, 'the same records');
  t.true(good.received.every((request) => verifies({ raw: `secret-${delivered.id}` }, request)));
  t.is(leaving.received.length, 2, 'the revived URL got its delivery');
  await second.app.close();

  for (const [args, code] of [
    [['admin', 'forwarding', 'retry'], 2],
    [['admin', 'forwarding', 'retry', '--parking', 'x'], 2],
    [['admin', 'forwarding', 'retry', '--parking', '999'], 1],
    [['admin', 'forwarding', 'replay', '--parking', String(dead.id)], 2],
    [['admin', 'forwarding', 'replay', '--parking', String(dead.id), '--since', 'yesterday'], 2],
    [['admin', 'forwarding', 'replay', '--parking', String(dead.id), '--since', '2026-01-01T08:00:00'], 2],
    [['admin', 'forwarding', 'replay', '--parking', '999', '--since', '2026-01-01'], 1],
  ] as const) {
    const result = await runCli([...args], { env });
    t.is(result.code, code, args.join(' '));
    t.not(result.stderr.trim(), '', 'says why on stderr');
  }
});

test('admin parking forwarding: a whsec_ secret shown once; --rotate-secret shows a new one and the overlap', async (t) => {
  const dir = tempDir(t);
  const app = await testApp(t, {}, { dir });
  const parking = await seedParking(app);
  await app.app.close();
  const env = app.databaseEnv;
  const set = (extra: string[]) =>
    runCli(['admin', 'parking', 'forwarding', '--parking', String(parking.id), ...extra, '--json'], { env });

  const first = await set(['--url', 'https://receiver.example/hook', '--expose', 'true']);
  t.is(first.code, 0, first.stderr);
  const made = JSON.parse(first.stdout) as Record<string, unknown>;
  t.deepEqual(Object.keys(made), [
    'parking_id',
    'url',
    'expose',
    'forward_unverified',
    'forwarding_secret',
    'previous_secret_until',
  ]);
  t.regex(String(made.forwarding_secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
  const again = JSON.parse(
    (await set(['--url', 'https://receiver.example/other', '--expose', 'true'])).stdout,
  ) as Record<string, unknown>;
  t.like(again, { url: 'https://receiver.example/other', forwarding_secret: null, previous_secret_until: null });

  const rotated = await set(['--rotate-secret', '--overlap-hours', '6']);
  t.is(rotated.code, 0, rotated.stderr);
  const next = JSON.parse(rotated.stdout) as Record<string, unknown>;
  t.regex(String(next.forwarding_secret), /^whsec_/);
  t.not(next.forwarding_secret, made.forwarding_secret);
  const until = Date.parse(String(next.previous_secret_until));
  t.true(Math.abs(until - (Date.now() + 6 * 3_600_000)) < 60_000, 'six hours from now');
  const plain = await runCli(['admin', 'parking', 'forwarding', '--parking', String(parking.id), '--rotate-secret'], {
    env,
  });
  t.regex(plain.stdout, /shown this once/);
  t.regex(plain.stdout, /previous secret signs too until/);

  const local = await set(['--url', 'http://127.0.0.1:9/hook', '--expose', 'true']);
  t.is(local.code, 0, 'set anyway: the API that forwards may allow it');
  t.is(
    local.stderr,
    "note: 127.0.0.1 (loopback): an API with FORWARDING_ALLOW_PRIVATE=false (parkbench api's default) refuses to deliver there; parkbench start allows it\n",
  );
  const byName = await set(['--url', 'http://localhost:9/hook', '--expose', 'true']);
  t.regex(byName.stderr, /^note: localhost resolves to (127\.0\.0\.1|::1) \(loopback\)/);
  const mapped = await set(['--url', 'http://[0:0:0:0:0:ffff:127.0.0.1]:9/hook', '--expose', 'true']);
  t.is(mapped.code, 0);
  t.is(
    mapped.stderr,
    "note: ::ffff:7f00:1 (loopback, in IPv4-mapped IPv6): an API with FORWARDING_ALLOW_PRIVATE=false (parkbench api's default) refuses to deliver there; parkbench start allows it\n",
  );
  const allowed = await runCli(
    [
      'admin',
      'parking',
      'forwarding',
      '--parking',
      String(parking.id),
      '--url',
      'http://127.0.0.1:9/hook',
      '--expose',
      'true',
    ],
    { env: { ...env, FORWARDING_ALLOW_PRIVATE: 'true' } },
  );
  t.is(allowed.stderr, '');
  t.is(first.stderr, '', 'a public URL: no note');

  for (const extra of [
    [],
    ['--url', 'https://x.example/'],
    ['--expose', 'true'],
    ['--rotate-secret', '--overlap-hours', '721'],
    ['--rotate-secret', '--overlap-hours', 'x'],
    ['--forward-unverified', 'true', '--rotate-secret'],
  ]) {
    const result = await set(extra);
    t.is(result.code, 2, extra.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1);
  }
});
