// POST /api/operator/boxes/:module_id/commands with `status` and `access`:
// a status request (a BATTERY_QUERY read as the box's state) and a one-off
// operator ACCESS (a smart key of purpose `operator`, naming the operator, one
// try, a short window), to a real simulated box on the API's embedded broker.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { FrameKind, parseCommandHeader, Status } from '../../../firmware-protocol/index.js';
import { errorBody, type TestApp } from '../../helpers/api-app.js';
import { waitFor } from '../../helpers/wait.js';
import { addParking, controlApp, startBox } from '../../helpers/control-bench.js';
import { sendCommand, setSim, untilSubscribed } from '../../helpers/operator-box.js';
import { one } from '../../helpers/sql.js';

interface Answer {
  module_id: number;
  command: string;
  verified: boolean;
  status: string | null;
  barrier: string | null;
  battery_mv: number | null;
  box_seq: number | null;
  box_time: string | null;
  box_time_drift_seconds: number | null;
  smart_key_id: number | null;
  box_log_id: number | null;
}

async function benchWithBox(t: Parameters<typeof controlApp>[0], options: { signed?: boolean } = {}) {
  const app = await controlApp(t);
  const operator = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const moduleId = (await addParking(app, options)).moduleIds[0] ?? 0;
  const running = await startBox(t, app, moduleId);
  await untilSubscribed(app, operator.token, moduleId, running.box);
  return { app, token: operator.token, moduleId, ...running };
}

async function operatorIdOf(app: TestApp, name: string): Promise<number> {
  const row = (await one(app.ctx.store, 'SELECT id FROM operators WHERE name = ?', name)) as { id: number };
  return row.id;
}

test("status: a BATTERY_QUERY whose verified answer is the box's state (barrier, battery, box time and drift, box_seq)", async (t) => {
  const { app, token, moduleId, box } = await benchWithBox(t);
  box.apply({ batteryMv: 3_650, clockOffsetSeconds: 90 });
  const response = await sendCommand(app, token, moduleId, { command: 'status' });
  t.is(response.statusCode, 200, response.body);
  const answer = response.json<Answer>();
  t.like(answer, {
    module_id: moduleId,
    command: 'status',
    verified: true,
    status: 'OK',
    barrier: 'closed',
    battery_mv: 3_650,
    box_seq: box.state.boxSeq,
    box_time_drift_seconds: 90,
    smart_key_id: null,
  });
  t.is(answer.box_time, new Date((Math.floor(app.clock.now() / 1000) + 90) * 1000).toISOString());
  t.like(await one(app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', answer.box_log_id ?? 0), {
    type: 'control',
    verified: 1,
  });
});

for (const signed of [false, true]) {
  test(`access (${signed ? 'signed' : 'sealed'} parking): an operator ACCESS opens the box, its smart key of purpose operator names the operator, its box log shows it`, async (t) => {
    const { app, token, moduleId, box } = await benchWithBox(t, { signed });
    const before = app.clock.now();
    const response = await sendCommand(app, token, moduleId, { command: 'access' });
    t.is(response.statusCode, 200, response.body);
    const answer = response.json<Answer>();
    t.like(answer, { module_id: moduleId, command: 'access', verified: true, status: 'OK', barrier: 'opening' });
    await waitFor(() => box.barrier.state === 'opening', 'the barrier opening');

    const key = await app.ctx.smartKeys.findById(answer.smart_key_id ?? 0);
    if (key === undefined) return t.fail('no smart key');
    t.like(key, {
      purpose: 'operator',
      user_id: null,
      session_id: null,
      module_ids: JSON.stringify([moduleId]),
      revoked_at: null,
    });
    const row = (await one(app.ctx.store, 'SELECT operator_id, signed_by FROM smart_keys WHERE id = ?', key.id)) as {
      operator_id: number;
      signed_by: string | null;
    };
    t.is(row.operator_id, await operatorIdOf(app, 'bench'));
    t.is(row.signed_by !== null, signed);
    t.regex(key.description ?? '', /operator bench/);
    // A short window from now, one try.
    t.is(key.start_time, Math.floor(before / 1000) * 1000);
    t.is(key.end_time - key.start_time, 60_000);
    const header = parseCommandHeader(key.access_command);
    if (!header.ok) return t.fail('the access command does not parse');
    t.is(header.header.kind, signed ? FrameKind.ACCESS_SIGNED : FrameKind.ACCESS);
    t.is(header.header.keyId, key.id);

    t.like(await one(app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', answer.box_log_id ?? 0), {
      smart_key_id: key.id,
      fo_user_id: null,
      verified: 1,
      source: 'mqtt',
      type: 'in',
    });
    const logs = await app.app.inject({
      method: 'GET',
      url: `/api/operator/box_logs?box=${moduleId}&limit=1`,
      headers: { authorization: `Bearer ${token}` },
    });
    t.like(logs.json<{ box_logs: unknown[] }>().box_logs[0], {
      id: answer.box_log_id,
      smart_key_id: key.id,
      session_id: null,
      key_purpose: 'operator',
      operator: 'bench',
      status: 'OK',
    });

    // One try: the same command again opens nothing.
    const again = await app.mqtt?.sendCommand(moduleId, key.access_command, {}, 2_000);
    if (again === undefined || 'error' in again) return t.fail('no answer to the second try');
    t.true(again.answered.log?.verified);
    t.is(
      (await one(app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', again.answered.log?.id ?? 0))?.status,
      Status.NO_TRIES_LEFT,
    );
  });
}

test('access: BARRIER_FAULT once a jam is set through the sim route', async (t) => {
  const { app, token, moduleId, box } = await benchWithBox(t);
  t.is((await setSim(app, token, moduleId, { jam: true })).statusCode, 202);
  await waitFor(() => box.faults.jammed, 'the box jammed');
  const response = await sendCommand(app, token, moduleId, { command: 'access' });
  t.is(response.statusCode, 200, response.body);
  t.like(response.json<Answer>(), { command: 'access', verified: true, status: 'BARRIER_FAULT', barrier: 'fault' });
  t.is(box.barrier.state, 'fault');
});

test('access: 504 box_timeout when the box drops every command', async (t) => {
  const { app, token, moduleId, box } = await benchWithBox(t);
  t.is((await setSim(app, token, moduleId, { drop_commands: 1 })).statusCode, 202);
  await waitFor(() => box.faults.dropCommands === 1, 'the box dropping');
  const dropped = box.counters.commandsDropped;
  const waiting = sendCommand(app, token, moduleId, { command: 'access' });
  await waitFor(() => box.counters.commandsDropped > dropped, 'the ACCESS dropped');
  app.clock.advance(app.config.boxAnswerTimeoutMs + 1);
  const response = await waiting;
  t.is(response.statusCode, 504);
  t.is(errorBody(t, response).error, 'box_timeout');
});
