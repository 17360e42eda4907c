// A conformance run holds its box (box_holds): the real API (embedded
// broker, control dispatcher, ingestion) on a fake clock, a real simulated
// box on MQTT (or none: a silent box), runs started over HTTP. While a run
// lasts the dispatcher sends the box nothing and the operator's control
// commands are refused naming the run, a run of another API process (its
// own runs, the same database) is refused, and the run's lease is renewed; what was queued
// meanwhile goes out after the run, above its sequences, once the run has
// put the box's issuer keys back. A run is cancelled over HTTP.
import test from 'ava';
import type { LightMyRequestResponse } from 'fastify';
import type { ConformanceRunView } from '../../../api/conformance-runs/run-view.js';
import { ConformanceRuns, RUN_DEFAULTS } from '../../../api/conformance-runs/runs.js';
import { RUN_CONTROL_SEQUENCES } from '../../../api/conformance-runs/suite-box.js';
import { operationReport } from '../../../api/control/operations.js';
import { addOperator } from '../../../api/operators/accounts.js';
import { RESTORE_CASE_NAME } from '../../../conformance/restore-issuers.js';
import { parseResponse, statusName } from '../../../firmware-protocol/index.js';
import { silentLogger } from '../../../lib/logger.js';
import { Runs } from '../../../api/runs/index.js';
import { noEvents } from '../../../api/events/types.js';
import type { SimulatedBox } from '../../../simulator/simulated-box.js';
import { addParking, controlApp, dispatcherAtRest, pumpUntil, startBox } from '../../helpers/control-bench.js';
import { errorBody, type TestApp } from '../../helpers/api-app.js';
import { anotherDriver, createSession } from '../../helpers/parking.js';
import { all } from '../../helpers/sql.js';

interface Operator {
  app: TestApp;
  token: string;
}

function call(
  operator: Operator,
  method: 'GET' | 'POST',
  url: string,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return operator.app.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${operator.token}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

async function runOf(operator: Operator, runId: string): Promise<ConformanceRunView> {
  return (await call(operator, 'GET', `/api/operator/conformance/${runId}`)).json<{ run: ConformanceRunView }>().run;
}

/** Moves the fake clock 200 ms at a time, with real time between steps for
 * the broker, the box, the suite and the dispatcher, until `condition`. */
async function stepUntil(
  app: TestApp,
  condition: () => boolean | Promise<boolean>,
  what: string,
  stepMs = 200,
): Promise<void> {
  for (let step = 0; step < 5_000; step++) {
    if (await condition()) return;
    await dispatcherAtRest(app);
    await new Promise((resolve) => setTimeout(resolve, 15));
    app.clock.advance(stepMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function sessionKey(app: TestApp, parkingId: number): Promise<{ id: number; command: Buffer }> {
  const { accessToken } = await anotherDriver(app);
  const created = await createSession(app, accessToken, { parking_session: { secured_parking_id: parkingId } });
  const key = created.json<{ smart_key: { id: number; access_command: string } }>().smart_key;
  return { id: key.id, command: Buffer.from(key.access_command, 'base64') };
}

async function statusAt(box: SimulatedBox, command: Buffer): Promise<string | undefined> {
  const response = await box.handleCommand(command);
  return response === null ? undefined : statusName(parseResponse(response).status);
}

const hex = (key: Uint8Array | null | undefined): string | null =>
  key === null || key === undefined ? null : Buffer.from(key).toString('hex');

test('a revocation during a run waits for its end: the suite puts the issuer keys back, then the REVOKE goes out above the run, and a new key opens', async (t) => {
  t.timeout(240_000);
  const app = await controlApp(t);
  const operator = { app, token: (await addOperator(app.ctx.store, 'bench', app.clock.now())).token };
  const parking = await addParking(app, { signed: true, boxes: ['entrance'] });
  const moduleId = parking.moduleIds[0] ?? 0;
  const { box } = await startBox(t, app, moduleId);
  const serviceKey = hex(box.state.issuerKey);
  t.not(serviceKey, null);
  const revoked = await sessionKey(app, parking.id);

  const started = await call(operator, 'POST', `/api/operator/boxes/${moduleId}/conformance`, { skip_wearing: true });
  t.is(started.statusCode, 202, started.body);
  const { run } = started.json<{ run: ConformanceRunView }>();
  // The suite has put its own issuers on the box: now the key is revoked.
  await stepUntil(app, () => hex(box.state.issuerKey) !== serviceKey, "the suite's issuers on the box");
  const revocation = await call(operator, 'POST', `/api/operator/smart_keys/${revoked.id}/revoke`);
  t.is(revocation.statusCode, 200, revocation.body);
  const { operation } = revocation.json<{ operation: string }>();

  let ended = run;
  await stepUntil(app, async () => (ended = await runOf(operator, run.id)).state !== 'running', 'the run to end');
  t.is(
    ended.cases.find((entry) => entry.name === RESTORE_CASE_NAME)?.result,
    'pass',
    JSON.stringify(ended.cases.filter((entry) => entry.result === 'fail')),
  );
  await pumpUntil(app, async () => (await operationReport(app.ctx.store, operation)).done === 1, 'the REVOKE done');

  const rows = await all<{ purpose: string; state: string; control_seq: number | null; last_status: string | null }>(
    app.ctx.store,
    'SELECT purpose, state, control_seq, last_status FROM control_commands WHERE module_id = ? ORDER BY id',
    moduleId,
  );
  t.is(rows.length, 2, JSON.stringify(rows));
  // The put-back queued at the start, done by the run itself.
  t.like(rows[0], { purpose: 'restore', state: 'done', control_seq: null });
  t.regex(rows[0]?.last_status ?? '', new RegExp(`^put back by conformance run ${run.id}`));
  // The REVOKE went out after the run, above every sequence of its block.
  t.like(rows[1], { purpose: 'revoke', state: 'done', last_status: 'OK' });
  const first = ended.summary.control_seq.first;
  t.true((rows[1]?.control_seq ?? 0) >= first + RUN_CONTROL_SEQUENCES, JSON.stringify({ first, rows }));
  t.true((rows[1]?.control_seq ?? 0) >= (ended.summary.control_seq.next ?? Infinity));

  // The box holds the service's issuer keys: a freshly signed key opens, the revoked one does not.
  t.is(hex(box.state.issuerKey), serviceKey);
  t.is(await statusAt(box, (await sessionKey(app, parking.id)).command), 'OK');
  t.is(await statusAt(box, revoked.command), 'REVOKED');
});

test("while a run holds a box: the dispatcher sends it nothing, the operator's control commands and another process's run are refused naming the run, the lease is renewed; cancelled, it ends at once and what waited goes out", async (t) => {
  t.timeout(120_000);
  const app = await controlApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const operator = { app, token };
  // No simulator: a silent box (its availability unknown, so a run may start).
  const parking = await addParking(app, { signed: true });
  const [held = 0, free = 0] = parking.moduleIds;
  const key = await sessionKey(app, parking.id);

  const started = await call(operator, 'POST', `/api/operator/boxes/${held}/conformance`, { answer_ms: 600_000 });
  t.is(started.statusCode, 202, started.body);
  const { run } = started.json<{ run: ConformanceRunView }>();
  const first = run.summary.control_seq.first;

  // Another API process's runs (their own memory, the same database) find the box held.
  const elsewhere = new ConformanceRuns({
    store: app.ctx.store,
    clock: app.clock,
    config: app.config,
    logger: silentLogger,
    runs: new Runs({
      store: app.ctx.store,
      clock: app.clock,
      config: app.config,
      events: noEvents,
      logger: silentLogger,
    }),
  });
  const broker = app.mqtt;
  if (broker === undefined) throw new Error('no MQTT');
  const second = await t.throwsAsync(() =>
    elsewhere.start(held, RUN_DEFAULTS, broker, { source: 'api', startedBy: 'bench', labels: {} }),
  );
  t.like(second, { kind: 'conflict' });
  t.regex(second.message, new RegExp(`^box ${held} is under conformance run ${run.id} \\(held until `));

  for (const command of ['status', 'battery_query', 'time_set']) {
    const refused = await call(operator, 'POST', `/api/operator/boxes/${held}/commands`, { command });
    t.is(refused.statusCode, 409, `${command}: ${refused.body}`);
    t.like(errorBody(t, refused), { error: 'operation_refused', details: [{ path: 'module_id' }] });
    t.regex(errorBody(t, refused).details[0]?.message ?? '', new RegExp(`held by conformance run ${run.id}`));
  }

  // The key opens both boxes: its REVOKE goes to the free one, and waits for the held one.
  const revocation = await call(operator, 'POST', `/api/operator/smart_keys/${key.id}/revoke`);
  t.is(revocation.statusCode, 200, revocation.body);
  const commandOf = async (moduleId: number) =>
    (
      await all<{ attempts: number; control_seq: number | null; state: string }>(
        app.ctx.store,
        "SELECT attempts, control_seq, state FROM control_commands WHERE module_id = ? AND purpose = 'revoke'",
        moduleId,
      )
    )[0];
  await stepUntil(app, async () => ((await commandOf(free))?.attempts ?? 0) >= 1, 'the send to the free box', 1_000);
  t.like(await commandOf(held), { attempts: 0, control_seq: null, state: 'pending' });

  // Three leases later the run still holds the box: its lease was renewed
  // (every 20 s: one renewal a step, its write given real time before the next).
  for (let step = 0; step < 9; step++) {
    app.clock.advance(20_000);
    await dispatcherAtRest(app);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  const hold = await all<{ holder: string; held_until: number }>(
    app.ctx.store,
    'SELECT holder, held_until FROM box_holds WHERE module_id = ?',
    held,
  );
  t.is(hold[0]?.holder, run.id);
  t.true((hold[0]?.held_until ?? 0) > app.clock.now(), JSON.stringify(hold));
  t.is((await runOf(operator, run.id)).state, 'running');
  t.like(await commandOf(held), { attempts: 0, state: 'pending' });

  // Cancel: a run of another box, or no run, is a 404; this one stops at once.
  const wrongBox = await call(operator, 'POST', `/api/operator/boxes/${free}/conformance/${run.id}/cancel`);
  t.is(wrongBox.statusCode, 404, wrongBox.body);
  t.like(errorBody(t, wrongBox), { error: 'resource_not_found', details: [{ path: 'run_id' }] });
  const unknown = await call(operator, 'POST', `/api/operator/boxes/${held}/conformance/AAAAAAAAAAAA/cancel`);
  t.is(unknown.statusCode, 404, unknown.body);
  const cancelled = await call(operator, 'POST', `/api/operator/boxes/${held}/conformance/${run.id}/cancel`);
  t.is(cancelled.statusCode, 202, cancelled.body);
  t.is(cancelled.json<{ run: ConformanceRunView }>().run.id, run.id);
  let ended = run;
  // Real time only: the cancel does not wait for the clock (the answer it waited for would take 20 minutes).
  for (let spin = 0; spin < 500 && (ended = await runOf(operator, run.id)).state === 'running'; spin++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  t.like(ended, { state: 'error', summary: { interrupted: true } });
  t.regex(ended.error ?? '', /^cancelled by operator bench/);
  const again = await call(operator, 'POST', `/api/operator/boxes/${held}/conformance/${run.id}/cancel`);
  t.is(again.statusCode, 409, again.body);
  t.like(errorBody(t, again), { error: 'operation_refused', details: [{ path: 'run_id' }] });

  // The box is free: no hold, the put-back done (the run never touched the keys), the REVOKE sent above the run.
  t.deepEqual(await all(app.ctx.store, 'SELECT module_id FROM box_holds'), []);
  const restore = await all<{ state: string; last_status: string }>(
    app.ctx.store,
    "SELECT state, last_status FROM control_commands WHERE module_id = ? AND purpose = 'restore'",
    held,
  );
  t.like(restore, [
    { state: 'done', last_status: `nothing to put back: conformance run ${run.id} did not touch the issuer keys` },
  ]);
  await stepUntil(
    app,
    async () => ((await commandOf(held))?.attempts ?? 0) >= 1,
    'the REVOKE sent to the held box',
    1_000,
  );
  t.true(((await commandOf(held))?.control_seq ?? 0) >= first + RUN_CONTROL_SEQUENCES);
});
