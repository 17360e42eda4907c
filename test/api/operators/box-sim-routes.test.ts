// POST /api/operator/boxes/:module_id/sim: a sim/set checked with the
// simulator's own parser (lib/sim-set.ts) and published through the API's
// MQTT side to a real simulated box on the API's embedded broker.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { errorBody, testApp } from '../../helpers/api-app.js';
import { waitFor } from '../../helpers/wait.js';
import { addParking, controlApp, startBox } from '../../helpers/control-bench.js';
import { setSim, untilSubscribed } from '../../helpers/operator-box.js';

test('a sim/set reaches the simulated box: 202 with what was published, the box jammed and its battery low', async (t) => {
  const app = await controlApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const moduleId = (await addParking(app)).moduleIds[0] ?? 0;
  const { box } = await startBox(t, app, moduleId);
  await untilSubscribed(app, token, moduleId, box);
  const response = await setSim(app, token, moduleId, { jam: true, battery_mv: 3_100, delay_ms: 0 });
  t.is(response.statusCode, 202, response.body);
  t.deepEqual(response.json(), { module_id: moduleId, published: { jam: true, battery_mv: 3_100, delay_ms: 0 } });
  await waitFor(() => box.faults.jammed, 'the box jammed');
  t.is(box.snapshot().battery_mv, 3_100);
  t.deepEqual(box.snapshot().faults, ['jam']);

  const cleared = await setSim(app, token, moduleId, { jam: false, battery_mv: 3_900 });
  t.is(cleared.statusCode, 202);
  await waitFor(() => !box.faults.jammed, 'the jam cleared');
  t.is(box.snapshot().battery_mv, 3_900);
});

test('a bad sim/set field 422 naming it (nothing published), an unknown box 404, no MQTT 503', async (t) => {
  const app = await controlApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const moduleId = (await addParking(app)).moduleIds[0] ?? 0;
  const { box, link } = await startBox(t, app, moduleId);
  await untilSubscribed(app, token, moduleId, box);
  for (const [payload, path, message] of [
    [{ jam: 'yes' }, 'jam', 'must be true or false'],
    [{ drop_commands: 2 }, 'drop_commands', 'must be a number from 0 to 1'],
    [{ jamm: true }, 'jamm', /^unknown setting \(known: drop_commands, /],
    [{ battery_mv: 3_000, delay_ms: -1 }, 'delay_ms', 'must be a number from 0 to 600000'],
  ] as const) {
    const response = await setSim(app, token, moduleId, payload);
    t.is(response.statusCode, 422, JSON.stringify(payload));
    const detail = errorBody(t, response).details[0];
    t.is(detail?.path, path);
    if (typeof message === 'string') t.is(detail?.message, message);
    else t.regex(detail?.message ?? '', message);
  }
  const notObject = await setSim(app, token, moduleId, [1]);
  t.is(notObject.statusCode, 422);
  // Nothing of the refused ones reached the box (the valid battery_mv of the last one included).
  t.not(box.snapshot().battery_mv, 3_000);
  t.is(link.counters.badSettings, 0);

  const unknown = await setSim(app, token, 4242, { jam: true });
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), {
    error: 'resource_not_found',
    details: [{ path: 'module_id', message: 'no box with module id 4242' }],
  });
  const badId = await setSim(app, token, 'x', { jam: true });
  t.is(badId.statusCode, 422);
  t.is(errorBody(t, badId).details[0]?.path, 'module_id');

  const httpOnly = await testApp(t);
  const operator = await addOperator(httpOnly.ctx.store, 'bench', httpOnly.clock.now());
  const parking = await addParking(httpOnly);
  const noMqtt = await setSim(httpOnly, operator.token, parking.moduleIds[0] ?? 0, { jam: true });
  t.is(noMqtt.statusCode, 503);
  t.is(errorBody(t, noMqtt).error, 'mqtt_unavailable');
});
