// `parkbench admin forwarding status|retry` through the real entry point, on
// a database where forwarding has delivered, failed and given up.
import { join } from 'node:path';
import test from 'ava';
import { loggedIn, tempDir, testApp } from '../helpers/api-app.js';
import { boxAnswer, boxLog, postBoxLogs } from '../helpers/box-logs.js';
import { createSession, seedParking } from '../helpers/parking.js';
import { fail, ok, startReceiver } from '../helpers/receiver.js';
import { runCli } from '../helpers/run-cli.js';

test('status per URL (pending, delivered, dead, last error); retry revives the dead', async (t) => {
  const dir = tempDir(t);
  const good = await startReceiver(t, [ok]);
  const bad = await startReceiver(t, [fail]);
  const app = await testApp(t, { tokenTtlSeconds: 86_400, forwardingMaxAgeHours: 1 }, { dir });
  const tokens = await loggedIn(app);
  const delivered = seedParking(app);
  const dead = seedParking(app);
  app.ctx.parkings.setForwarding(delivered.id, good.url, true, 'secret-one');
  app.ctx.parkings.setForwarding(dead.id, bad.url, true, 'secret-two');
  const session = (await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: delivered.id } })).json<{ smart_key: { id: number; access_command: string } }>();
  const command = Buffer.from(session.smart_key.access_command, 'base64');
  const log = (parking: typeof delivered, smartKeyId: number | null) =>
    boxLog({ foUserId: 1, smartKeyId, box: parking.entrance, parkingId: parking.id, command, response: boxAnswer(parking.entrance, command) });
  t.is((await postBoxLogs(app, tokens.access_token, { box_logs: [log(delivered, session.smart_key.id), log(dead, null), log(dead, null)] })).statusCode, 201);
  await app.ctx.forwarding.runOnce();
  app.clock.advance(2 * 3_600_000);
  await app.ctx.forwarding.runOnce();
  await app.app.close();

  const env = { DATABASE_PATH: join(dir, 'db', 'test.sqlite') };
  const status = await runCli(['admin', 'forwarding', 'status', '--json'], { env });
  t.is(status.code, 0, status.stderr);
  const rows = JSON.parse(status.stdout) as Record<string, unknown>[];
  t.deepEqual(rows.map((row) => Object.keys(row)), [0, 1].map(() => ['parking_id', 'url', 'pending', 'delivered', 'dead', 'last_error', 'last_attempt_at']));
  t.like(rows[0], { parking_id: delivered.id, url: good.url, pending: 0, delivered: 1, dead: 0, last_error: null });
  t.like(rows[1], { parking_id: dead.id, url: bad.url, pending: 0, delivered: 0, dead: 2, last_error: 'HTTP 500' });

  const one = await runCli(['admin', 'forwarding', 'status', '--parking', String(dead.id)], { env });
  t.is(one.code, 0);
  t.regex(one.stdout, new RegExp(`parking ${dead.id}.*dead 2.*last error: HTTP 500`));
  t.notRegex(one.stdout, new RegExp(good.url));

  const retry = await runCli(['admin', 'forwarding', 'retry', '--parking', String(dead.id), '--json'], { env });
  t.is(retry.code, 0, retry.stderr);
  t.deepEqual(JSON.parse(retry.stdout), { parking_id: dead.id, revived_deliveries: 1 });
  const after = JSON.parse((await runCli(['admin', 'forwarding', 'status', '--parking', String(dead.id), '--json'], { env })).stdout) as Record<string, unknown>[];
  t.like(after[0], { pending: 2, dead: 0 });

  t.is((await runCli(['admin', 'forwarding', 'retry'], { env })).code, 2, 'a missing --parking is a usage error');
  t.is((await runCli(['admin', 'forwarding', 'retry', '--parking', 'x'], { env })).code, 2);
  t.is((await runCli(['admin', 'forwarding', 'retry', '--parking', '999'], { env })).code, 1);
});
