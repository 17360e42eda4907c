// POST /api/operator/boxes/:module_id/commands: BATTERY_QUERY and TIME_SET
// from the operator API to a real simulated box, through the API's embedded
// broker (test/helpers/control-bench.ts: the real service, dispatcher and ingestion).
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { errorBody, testApp } from '../../helpers/api-app.js';
import { addParking, controlApp, startBox } from '../../helpers/control-bench.js';
import { sendCommand as send, untilSubscribed } from '../../helpers/operator-box.js';
import { one } from '../../helpers/sql.js';

test('BATTERY_QUERY and TIME_SET reach the simulated box; its verified answers come back and are stored as box logs', async (t) => {
  const app = await controlApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await addParking(app);
  const moduleId = parking.moduleIds[0] ?? 0;
  const { box } = await startBox(t, app, moduleId);
  await untilSubscribed(app, token, moduleId, box);
  const answered = box.counters.commandsAnswered;
  for (const command of ['battery_query', 'time_set'] as const) {
    const response = await send(app, token, moduleId, { command });
    t.is(response.statusCode, 200, `${command}: ${response.body}`);
    const body = response.json<{
      verified: boolean;
      status: string;
      battery_mv: number;
      barrier: string;
      box_log_id: number;
    }>();
    t.like(body, { module_id: moduleId, command, verified: true, status: 'OK', barrier: 'closed' });
    t.is(typeof body.battery_mv, 'number');
    t.like(await one(app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', body.box_log_id), {
      equipment_id: moduleId,
      verified: 1,
      source: 'mqtt',
      type: 'control',
    });
  }
  t.is(box.counters.commandsAnswered, answered + 2);
  // Each took a control sequence of its own, which the box accepted.
  const learned = await app.ctx.boxes.learned(moduleId);
  t.is(learned?.last_control_seq, (learned?.next_control_seq ?? 0) - 1);
});

test('an unknown box 404, a bad command or module id 422 naming it, no MQTT 503, a silent box 504', async (t) => {
  const app = await controlApp(t, { config: { boxAnswerTimeoutMs: 1_000 } });
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await addParking(app);
  const unknown = await send(app, token, 4242, { command: 'battery_query' });
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), {
    error: 'resource_not_found',
    details: [{ path: 'module_id', message: 'no box with module id 4242' }],
  });
  for (const [moduleId, payload, field] of [
    [parking.moduleIds[0] ?? 0, { command: 'ACCESS' }, 'command'],
    [parking.moduleIds[0] ?? 0, {}, 'command'],
    [parking.moduleIds[0] ?? 0, { command: 1 }, 'command'],
    ['x', { command: 'battery_query' }, 'module_id'],
    ['-1', { command: 'time_set' }, 'module_id'],
  ] as const) {
    const response = await send(app, token, moduleId, payload);
    t.is(response.statusCode, 422, JSON.stringify(payload));
    t.is(errorBody(t, response).details[0]?.path, field);
  }
  // No box connected: the answer times out on the API's clock.
  const waiting = send(app, token, parking.moduleIds[1] ?? 0, { command: 'battery_query' });
  await new Promise((resolve) => setTimeout(resolve, 50));
  app.clock.advance(1_001);
  const silent = await waiting;
  t.is(silent.statusCode, 504);
  t.is(errorBody(t, silent).error, 'box_timeout');

  const httpOnly = await testApp(t);
  const operator = await addOperator(httpOnly.ctx.store, 'bench', httpOnly.clock.now());
  const noMqtt = await send(httpOnly, operator.token, 1, { command: 'battery_query' });
  t.is(noMqtt.statusCode, 503);
  t.is(errorBody(t, noMqtt).error, 'mqtt_unavailable');
});
