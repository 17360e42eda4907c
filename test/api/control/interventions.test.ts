// What an operator does about a stuck control delivery (api/control/
// interventions.ts): retry a failed one, which the dispatcher then delivers;
// skip one whose box will never answer, so that its rotation takes its step.
// The real API with its dispatcher on a fake clock and real simulated boxes;
// `admin control` as a real process on the same database.
import test from 'ava';
import { revokeSmartKey, rotateIssuer } from '../../../api/control/operations.js';
import { addOperator } from '../../../api/operators/accounts.js';
import { parseResponse, statusName } from '../../../firmware-protocol/index.js';
import { databaseArgument, loggedIn, type TestApp } from '../../helpers/api-app.js';
import { createSession } from '../../helpers/parking.js';
import { runCli } from '../../helpers/run-cli.js';
import { all, run } from '../../helpers/sql.js';
import { addParking, controlApp, pumpUntil, startBox, statesOf } from '../../helpers/control-bench.js';

async function operatorGet(app: TestApp, token: string, url: string) {
  return app.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

async function operatorPost(app: TestApp, token: string, url: string) {
  return app.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` } });
}

async function commandsOf(app: TestApp, moduleId: number) {
  return all<{ id: number; state: string; last_error: string | null }>(
    app.ctx.store,
    `SELECT id, state, last_error FROM control_commands WHERE module_id = ${moduleId} ORDER BY id`,
  );
}

test('a failed REVOKE retried through the operator API goes back to the queue and reaches the box; done, it cannot be retried or skipped (409)', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { signed: true, isOnline: true, boxes: ['entrance'] });
  const [entranceId = 0] = parking.moduleIds;
  const token = (await loggedIn(app)).access_token;
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  const key = created.json<{ smart_key: { id: number; access_command: string } }>().smart_key;
  await revokeSmartKey(app.ctx, key.id, app.clock.now(), 'test');
  // Given up before the box came online (as after a REPLAY loop or a refusal): failed, not sent again.
  await run(
    app.ctx.store,
    "UPDATE control_commands SET state = 'failed', last_error = 'REPLAY 4 times', finished_at = ? WHERE module_id = ?",
    app.clock.now(),
    entranceId,
  );
  const entrance = await startBox(t, app, entranceId);
  const operator = (await addOperator(app.ctx.store, 'bench', app.clock.now())).token;

  const failed = await operatorGet(app, operator, `/api/operator/control_commands?box=${entranceId}&state=failed`);
  t.is(failed.statusCode, 200, failed.body);
  const [listed] = failed.json<{ id: number; state: string; kind: string; purpose: string }[]>();
  t.like(listed, { state: 'failed', kind: 'REVOKE', purpose: 'revoke' });
  const id = listed?.id ?? 0;

  const retried = await operatorPost(app, operator, `/api/operator/control_commands/${id}/retry`);
  t.is(retried.statusCode, 200, retried.body);
  t.like(retried.json<{ state: string; last_error: string }>(), {
    state: 'pending',
    last_error: 'retried by operator bench (HTTP) (was: REPLAY 4 times)',
  });
  await pumpUntil(app, async () => (await commandsOf(app, entranceId))[0]?.state === 'done', 'the REVOKE delivered');
  const answer = await entrance.box.handleCommand(Buffer.from(key.access_command, 'base64'));
  t.is(statusName(parseResponse(answer ?? Buffer.alloc(32)).status), 'REVOKED');

  for (const intervention of ['retry', 'skip']) {
    const refused = await operatorPost(app, operator, `/api/operator/control_commands/${id}/${intervention}`);
    t.is(refused.statusCode, 409, refused.body);
    t.regex(refused.body, /is done/);
  }
  const unknown = await operatorPost(app, operator, '/api/operator/control_commands/999999/skip');
  t.is(unknown.statusCode, 404);
  t.regex(unknown.body, /no control command with id 999999/);
  const bad = await operatorGet(app, operator, '/api/operator/control_commands?state=lost');
  t.is(bad.statusCode, 422);
  t.regex(bad.body, /state/);
});

test('a rotation stuck on a box that never answers: `admin control skip` of its delivery (another process) lets the parking sign with the new key', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { signed: true, isOnline: true });
  const [entranceId = 0, exitId = 0] = parking.moduleIds;
  await startBox(t, app, entranceId);
  const started = await rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test');
  const next = (await app.ctx.parkings.findById(parking.id))?.issuer_next_public_key;
  await pumpUntil(app, async () => (await statesOf(app, started.operation))[entranceId] === 'done', 'the entrance');
  t.not((await app.ctx.parkings.findById(parking.id))?.issuer_public_key, next, 'the exit box holds it up');

  const listed = await runCli([
    'admin',
    'control',
    'list',
    '--state',
    'pending',
    '--json',
    '--database',
    databaseArgument(app),
  ]);
  t.is(listed.code, 0, listed.stderr);
  const pending = JSON.parse(listed.stdout) as { id: number; module_id: number }[];
  t.deepEqual(
    pending.map((command) => command.module_id),
    [exitId],
  );
  const skipped = await runCli([
    'admin',
    'control',
    'skip',
    '--id',
    String(pending[0]?.id ?? 0),
    '--database',
    databaseArgument(app),
  ]);
  t.is(skipped.code, 0, skipped.stderr);
  t.regex(skipped.stdout, new RegExp(`box ${exitId} SET_ISSUER \\(rotate_install, .*\\) skipped`));
  const parkingNow = await app.ctx.parkings.findById(parking.id);
  t.like(parkingNow, { issuer_public_key: next, issuer_next_public_key: null });
  t.deepEqual(await statesOf(app, started.operation), { [entranceId]: 'done', [exitId]: 'skipped' });

  const again = await runCli(['admin', 'control', 'retry', '--id', '999999', '--database', databaseArgument(app)]);
  t.is(again.code, 1);
  t.is(again.stderr.trim().split('\n').length, 1, again.stderr);
  t.regex(again.stderr, /no control command with id 999999/);
  const badFlag = await runCli(['admin', 'control', 'list', '--state', 'lost', '--database', databaseArgument(app)]);
  t.is(badFlag.code, 2);
  t.regex(badFlag.stderr, /--state must be one of pending, done, failed, skipped/);
});
