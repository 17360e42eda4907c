// The conformance suite run from the operator API: a real API on
// its embedded broker, a real simulated box logged in to it with its own
// account, the run started over HTTP and followed as its cases end; its
// JUnit and JSON are the command line's. The API runs on the system clock
// here, as `parkbench conformance` does: the suite measures answer times and
// barrier cycles of a box that runs in real time.
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { configWith } from '../../../api/config/index.js';
import { ConformanceRuns, RUN_DEFAULTS, RUNS_KEPT_PER_BOX } from '../../../api/conformance-runs/runs.js';
import type { ConformanceRunView } from '../../../api/conformance-runs/run-view.js';
import { CONFORMANCE_OPERATOR_USERNAME } from '../../../api/conformance-runs/suite-login.js';
import { MqttAccountRepository } from '../../../api/mqtt/accounts.js';
import { addOperator } from '../../../api/operators/accounts.js';
import { ControlCommandRepository } from '../../../api/control/repository.js';
import { createService, type Service } from '../../../api/service.js';
import { boxUnderTest } from '../../../conformance/box-under-test.js';
import { casesFor } from '../../../conformance/cases/index.js';
import { RESTORE_CASE_NAME } from '../../../conformance/restore-issuers.js';
import { systemClock } from '../../../lib/clock.js';
import { silentLogger } from '../../../lib/logger.js';
import { Runs, type RunWithResults } from '../../../api/runs/index.js';
import { noEvents } from '../../../api/events/types.js';
import { Topics } from '../../../lib/mqtt-topics.js';
import { Simulation } from '../../../simulator/simulation.js';
import { addParking, controlApp, provisioningOf } from '../../helpers/control-bench.js';
import { assertWellFormedXml, FAST_BARRIER, RUN_CHECKS, type JsonReport } from '../../helpers/conformance-fixtures.js';
import { errorBody, loggedIn, tempDir, testApp, TEST_SCRYPT_LOG2_N } from '../../helpers/api-app.js';
import { openSse } from '../../helpers/sse-client.js';
import { waitFor } from '../../helpers/wait.js';

/** Who starts the runs these tests start without HTTP. */
const ORIGIN = { source: 'api', startedBy: 'bench', labels: {} } as const;

interface Bench extends Pick<Service, 'app' | 'ctx' | 'mqtt'> {
  token: string;
  moduleId: number;
  parkingId: number;
  simulation: Simulation;
}

/** The API on the system clock with its embedded broker, an operator, a parking
 * with one box, and that box simulated on the broker (fast barrier), online. */
async function bench(t: ExecutionContext, options: { signed?: boolean; control?: boolean } = {}): Promise<Bench> {
  const dir = tempDir(t);
  const config = configWith({ databasePath: join(dir, 'db', 'test.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N });
  const { app, ctx, mqtt } = await createService(config, {
    clock: systemClock,
    startForwarding: false,
    startControl: options.control === true,
    mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => app.close());
  await app.ready();
  const { token } = await addOperator(ctx.store, 'bench', Date.now());
  const parking = await addParking(
    { ctx: ctx, clock: systemClock },
    { boxes: ['entrance'], ...(options.signed === true ? { signed: true } : {}) },
  );
  const moduleId = parking.moduleIds[0] ?? 0;
  const url = mqtt?.url ?? '';
  const simulation = await Simulation.start({
    members: [
      {
        provisioning: {
          ...(await provisioningOf({ ctx: ctx }, moduleId)),
          mqtt: { url, username: `box-${moduleId}`, password: `pw-${moduleId}` },
        },
        settings: {},
      },
    ],
    clock: systemClock,
    stateDir: null,
    barrierTimings: FAST_BARRIER,
    mqtt: { url, topics: new Topics() },
  });
  t.teardown(() => simulation.stop());
  // Online once its availability is in: it subscribed to its command topic before publishing it.
  await waitFor(() => mqtt?.availabilityOf(moduleId).availability === 'online', 'the box online');
  return { app, ctx, mqtt, token, moduleId, parkingId: parking.id, simulation };
}

function request(
  app: FastifyInstance,
  token: string,
  method: 'GET' | 'POST',
  url: string,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

function start(b: Pick<Bench, 'app' | 'token'>, moduleId: number | string, payload: unknown = {}) {
  return request(b.app, b.token, 'POST', `/api/operator/boxes/${moduleId}/conformance`, payload);
}

/** What `parkbench conformance` runs on this box, row by row: its cases, the put-back, the checks. */
async function cliRows(b: Bench, protocol: 1 | 2 = 2): Promise<{ names: string[]; checks: number }> {
  const box = boxUnderTest(await provisioningOf({ ctx: b.ctx }, b.moduleId));
  const names = casesFor(box, protocol).map((conformanceCase) => conformanceCase.name);
  return { names: protocol === 1 ? names : [...names, RESTORE_CASE_NAME], checks: RUN_CHECKS };
}

test('a run from the API passes every case of the CLI run, filling in as it goes; its JUnit and JSON are the CLI files; one run per box at a time', async (t) => {
  const b = await bench(t);
  const started = await start(b, b.moduleId, { cycle_ms: 5_000 });
  t.is(started.statusCode, 202, started.body);
  const { run } = started.json<{ run: ConformanceRunView }>();
  t.like(run, { module_id: b.moduleId, state: 'running', ended_at: null, error: null });
  t.like(run.options, { skip_wearing: false, protocol: 2, answer_ms: 2_000, cycle_ms: 5_000 });

  const again = await start(b, b.moduleId);
  t.is(again.statusCode, 409);
  t.like(errorBody(t, again), { error: 'operation_refused' });
  t.regex(errorBody(t, again).details[0]?.message ?? '', new RegExp(`under conformance run ${run.id}`));
  t.is(errorBody(t, again).details[0]?.path, 'module_id');
  const early = await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}/junit.xml`);
  t.is(early.statusCode, 409);
  t.is(errorBody(t, early).details[0]?.path, 'run_id');

  // Followed as the page does, until it ends: cases appear while it runs.
  const seen = new Set<number>();
  let latest = run;
  await waitFor(
    async () => {
      const response = await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}`);
      latest = response.json<{ run: ConformanceRunView }>().run;
      if (latest.state === 'running') seen.add(latest.cases.length);
      return latest.state !== 'running';
    },
    'the run to end',
    180_000,
  );
  t.true(
    [...seen].some((count) => count > 0),
    `cases while running: ${[...seen].join(', ')}`,
  );
  const expected = await cliRows(b);
  t.is(latest.state, 'passed', JSON.stringify(latest.cases.filter((entry) => entry.result === 'fail')));
  t.deepEqual(
    latest.cases.slice(0, expected.names.length).map((entry) => entry.name),
    expected.names,
  );
  t.is(latest.cases.length, expected.names.length + expected.checks);
  t.like(latest.summary, {
    target: 'mqtt',
    module_id: b.moduleId,
    total: latest.cases.length,
    failed: 0,
    interrupted: false,
  });
  t.is(typeof latest.ended_at, 'string');
  // The control sequences it took are the service's: the next command sends one after them.
  const next = (await b.ctx.boxes.findByModuleId(b.moduleId))?.next_control_seq ?? 0;
  t.true(next >= (latest.summary.control_seq.next ?? Infinity), `next_control_seq ${next}`);

  const json = await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}/report.json`);
  t.is(json.statusCode, 200);
  t.regex(String(json.headers['content-type']), /^application\/json/);
  t.is(json.headers['content-disposition'], `attachment; filename="conformance-${b.moduleId}.json"`);
  const report = JSON.parse(json.body) as JsonReport;
  t.deepEqual(
    report.results.map((entry) => entry.name),
    latest.cases.map((entry) => entry.name),
  );
  t.like(report, { interrupted: false, summary: { total: latest.cases.length, failed: 0 } });

  const junit = await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}/junit.xml`);
  t.is(junit.statusCode, 200);
  t.regex(String(junit.headers['content-type']), /^application\/xml/);
  t.is(junit.headers['content-disposition'], `attachment; filename="conformance-${b.moduleId}.xml"`);
  t.notThrows(() => assertWellFormedXml(junit.body));
  t.is(junit.body.match(/<testcase /g)?.length, report.results.length);
  t.regex(junit.body, new RegExp(`tests="${report.results.length}" failures="0"`));

  // The box is free again.
  const second = await start(b, b.moduleId, { skip_wearing: true, protocol: 1 });
  t.is(second.statusCode, 202, second.body);
});

test("an unknown box 404, a driver's token 403, bad fields 422 naming them, protocol 1 on a signed box 409, an unknown run 404, no MQTT 503", async (t) => {
  const app = await controlApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await addParking(app);
  const b = { app: app.app, token };
  const unknown = await start(b, 4242);
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), {
    error: 'resource_not_found',
    details: [{ path: 'module_id', message: 'no box with module id 4242' }],
  });
  for (const [moduleId, payload, field] of [
    [parking.moduleIds[0] ?? 0, { skip_wearing: 'yes' }, 'skip_wearing'],
    [parking.moduleIds[0] ?? 0, { protocol: 3 }, 'protocol'],
    [parking.moduleIds[0] ?? 0, { answer_ms: 0 }, 'answer_ms'],
    ['x', {}, 'module_id'],
  ] as const) {
    const response = await start(b, moduleId, payload);
    t.is(response.statusCode, 422, JSON.stringify(payload));
    t.is(errorBody(t, response).details[0]?.path, field);
  }
  const driver = await loggedIn(app);
  const forbidden = await start({ app: app.app, token: driver.access_token }, parking.moduleIds[0] ?? 0);
  t.is(forbidden.statusCode, 403);
  t.is(errorBody(t, forbidden).error, 'operator_required');
  for (const suffix of ['', '/junit.xml', '/report.json']) {
    const missing = await request(app.app, token, 'GET', `/api/operator/conformance/AAAAAAAAAAAA${suffix}`);
    t.is(missing.statusCode, 404, suffix);
    t.like(errorBody(t, missing), { error: 'resource_not_found', details: [{ path: 'run_id' }] });
  }
  const badId = await request(app.app, token, 'GET', `/api/operator/conformance/${'a'.repeat(65)}`);
  t.is(badId.statusCode, 422);
  t.is(errorBody(t, badId).details[0]?.path, 'run_id');
  // Version 1 has ACCESS under K_park alone: a signed parking's box cannot run it.
  const signedBox = (await addParking(app, { signed: true, boxes: ['entrance'] })).moduleIds[0] ?? 0;
  const version1 = await start(b, signedBox, { protocol: 1 });
  t.is(version1.statusCode, 409);
  t.like(errorBody(t, version1), { error: 'operation_refused', details: [{ path: 'module_id' }] });
  t.regex(errorBody(t, version1).details[0]?.message ?? '', /protocol 1 needs a box holding K_park/);
  // Nothing was started: the boxes' control sequences are untouched.
  t.is((await app.ctx.boxes.findByModuleId(parking.moduleIds[0] ?? 0))?.next_control_seq, 1);
  t.is((await app.ctx.boxes.findByModuleId(signedBox))?.next_control_seq, 1);

  const httpOnly = await testApp(t);
  const operator = await addOperator(httpOnly.ctx.store, 'bench', httpOnly.clock.now());
  const noMqtt = await start({ app: httpOnly.app, token: operator.token }, 1);
  t.is(noMqtt.statusCode, 503);
  t.is(errorBody(t, noMqtt).error, 'mqtt_unavailable');

  // The document shows the files' media types.
  const document = (await httpOnly.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>;
  }>();
  const files = (path: string) => Object.keys(document.paths[path]?.get.responses['200']?.content ?? {});
  t.deepEqual(files('/api/operator/conformance/{run_id}/junit.xml'), ['application/xml']);
  t.deepEqual(files('/api/operator/conformance/{run_id}/report.json'), ['application/json']);
});

test('a box its broker says is offline is refused: no case could pass', async (t) => {
  const b = await bench(t);
  await b.simulation.stop();
  await waitFor(() => b.mqtt?.availabilityOf(b.moduleId).availability === 'offline', 'the box offline');
  const refused = await start(b, b.moduleId);
  t.is(refused.statusCode, 409);
  t.like(errorBody(t, refused), { error: 'operation_refused', details: [{ path: 'module_id' }] });
  t.regex(errorBody(t, refused).details[0]?.message ?? '', /offline/);
});

test('the API stopping aborts a run and the box gets its issuer keys back before the broker closes', async (t) => {
  const b = await bench(t, { signed: true });
  const held = (): string | null => {
    const key = b.simulation.boxes[0]?.box.state.issuerKey;
    return key === undefined || key === null ? null : Buffer.from(key).toString('hex');
  };
  const hex = (key: Buffer | null | undefined): string | null => key?.toString('hex') ?? null;
  const parkingKeys = await provisioningOf({ ctx: b.ctx }, b.moduleId);
  t.is(held(), hex(parkingKeys.issuerKey));
  const started = await start(b, b.moduleId, { skip_wearing: true, cycle_ms: 5_000 });
  t.is(started.statusCode, 202, started.body);
  // The suite has installed its own issuers.
  await waitFor(() => held() !== hex(parkingKeys.issuerKey), 'the suite issuers', 60_000);
  await b.app.close();
  t.is(held(), hex(parkingKeys.issuerKey));
  const previous = b.simulation.boxes[0]?.box.state.issuerKeyPrevious;
  t.is(
    previous === undefined || previous === null ? null : Buffer.from(previous).toString('hex'),
    hex(parkingKeys.issuerKeyPrevious),
  );
});

test('onChange hears the start, every case as it ends and the end; the embedded broker is reached as the service operator account', async (t) => {
  const b = await bench(t);
  const changes: ConformanceRunView[] = [];
  const runs = new ConformanceRuns({
    store: b.ctx.store,
    clock: systemClock,
    config: b.ctx.config,
    logger: silentLogger,
    runs: new Runs({
      store: b.ctx.store,
      clock: systemClock,
      config: b.ctx.config,
      events: noEvents,
      logger: silentLogger,
    }),
    onChange: (run) => changes.push(run),
  });
  const broker = b.mqtt;
  if (broker === undefined) throw new Error('no MQTT');
  const run = await runs.start(b.moduleId, { ...RUN_DEFAULTS, skipWearing: true, protocol: 1 }, broker, ORIGIN);
  await waitFor(() => changes.at(-1)?.state !== 'running', 'the run to end', 120_000);
  await runs.close();
  const expected = await cliRows(b, 1);
  const final = changes.at(-1);
  t.is(final?.state, 'passed', JSON.stringify(final?.cases.filter((entry) => entry.result === 'fail')));
  t.is(final?.cases.length, expected.names.length + expected.checks);
  // One at the start, one per case, one at the end; the cases only ever grow.
  t.is(changes.length, 1 + (final?.cases.length ?? 0) + 1);
  t.deepEqual(
    changes.map((change) => change.cases.length),
    [0, ...Array.from({ length: final?.cases.length ?? 0 }, (_, index) => index + 1), final?.cases.length ?? 0],
  );
  t.deepEqual(await runs.get(run.id), final);
  t.like(await new MqttAccountRepository(b.ctx.store).findClient(CONFORMANCE_OPERATOR_USERNAME), {
    role: 'operator',
  });
});

test('a box keeps its newest runs in memory, the older ones read from the database; a run aborted before its first case ends in error with its report', async (t) => {
  const app = await controlApp(t);
  const moduleId = (await addParking(app, { boxes: ['entrance'] })).moduleIds[0] ?? 0;
  const broker = app.mqtt;
  if (broker === undefined) throw new Error('no MQTT');
  const runs = new ConformanceRuns({
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
  const ids: string[] = [];
  for (let index = 0; index < RUNS_KEPT_PER_BOX + 2; index++) {
    ids.push((await runs.start(moduleId, RUN_DEFAULTS, broker, ORIGIN)).id);
    // Aborted at once, as when the API stops: no case runs, nothing to put back.
    await runs.close();
  }
  // Past RUNS_KEPT_PER_BOX in memory, the run is read from the database: the same view.
  t.true(RUNS_KEPT_PER_BOX < ids.length);
  const oldest = await runs.ended(ids[0] ?? '');
  t.like(oldest.run, { id: ids[0], state: 'error', summary: { interrupted: true } });
  t.is(oldest.run.cases.length, RUN_CHECKS);
  t.like(oldest.report, { interrupted: true });
  const last = await runs.ended(ids.at(-1) ?? '');
  t.like(last.run, { state: 'error', summary: { interrupted: true } });
  // No case ran: only the checks over the (empty) run, as the CLI reports an interrupted run.
  t.is(last.run.cases.length, RUN_CHECKS);
  t.regex(last.run.error ?? '', /^interrupted/);
  t.like(last.report, { interrupted: true });
});

test('a run tells the event stream: a conformance event as it starts, as each case ends and at the end, and the stream sends them', async (t) => {
  const b = await bench(t);
  await b.app.listen({ host: '127.0.0.1', port: 0 });
  const address = b.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const client = await openSse(t, base, '/api/operator/events', { authorization: `Bearer ${b.token}` });
  await client.next((message) => message.event === 'snapshot', 'the snapshot');
  const hub = b.ctx.events;
  const before = hub.headId;
  const started = await start(b, b.moduleId, { skip_wearing: true, protocol: 1 });
  t.is(started.statusCode, 202, started.body);
  const { run } = started.json<{ run: ConformanceRunView }>();
  await waitFor(
    async () =>
      (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}`)).json<{ run: ConformanceRunView }>()
        .run.state !== 'running',
    'the run to end',
    120_000,
  );
  const ended = await client.next(
    (message) =>
      message.event === 'conformance' && (message.data as { run: ConformanceRunView }).run.state !== 'running',
    'the end of the run on the stream',
    0,
  );
  const final = (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}`)).json<{
    run: ConformanceRunView;
  }>().run;
  t.is(final.state, 'passed', JSON.stringify(final.cases.filter((entry) => entry.result === 'fail')));
  t.deepEqual((ended.data as { run: ConformanceRunView }).run, final);

  // The hub holds one event at the start, one per case and one at the end,
  // each the run as it was then (the stream coalesces a flush's into the newest).
  const published: number[] = [];
  hub.forEachAfter(before, (event) => {
    if (event.kind === 'conformance' && event.run.id === run.id)
      published.push((event.run as ConformanceRunView).cases.length);
  });
  t.deepEqual(published, [0, ...final.cases.map((_, index) => index + 1), final.cases.length]);
  // What the stream sent of it only ever grows, and ends with the whole run.
  const sent = client.messages
    .filter((message) => message.event === 'conformance')
    .map((message) => (message.data as { run: ConformanceRunView }).run);
  t.true(sent.length >= 2, `conformance messages: ${sent.length}`);
  t.true(sent.every((one) => one.id === run.id));
  t.deepEqual(
    sent.map((one) => one.cases.length),
    [...sent.map((one) => one.cases.length)].sort((a, c) => a - c),
  );

  // The kept run is on the stream too, as GET /api/operator/runs/{id} shows it.
  const runEnded = await client.next(
    (message) => message.event === 'run' && (message.data as { run: RunWithResults }).run.state !== 'running',
    'the end of the kept run on the stream',
    0,
  );
  const kept = (await request(b.app, b.token, 'GET', `/api/operator/runs/${run.id}`)).json<RunWithResults>();
  t.like(kept, { id: run.id, state: 'passed', source: 'api', started_by: 'bench', kind: 'conformance' });
  t.is(kept.results.length, final.cases.length);
  t.deepEqual({ ...(runEnded.data as { run: RunWithResults }).run, duration_ms: kept.duration_ms }, kept);
});

test("a box holding the service's own revocations passes: the run counts what the service sent it in the revocation list's capacity", async (t) => {
  const b = await bench(t, { control: true });
  // Revocations of the service's keys, live for hours, delivered by its dispatcher.
  const until = Math.floor(Date.now() / 1000) + 6 * 3600;
  const commands = new ControlCommandRepository(b.ctx.store);
  for (const batch of [0, 1]) {
    await commands.insert(
      {
        moduleId: b.moduleId,
        kind: 'REVOKE',
        body: { entries: Array.from({ length: 10 }, (_, index) => ({ key_id: 100 + batch * 10 + index, until })) },
        operation: `revoke:test-${batch}`,
        purpose: 'revoke',
        parkingId: b.parkingId,
        requestedBy: 'test',
      },
      Date.now(),
    );
  }
  await waitFor(
    async () => (await commands.listOfOperation('revoke:test-1')).every((row) => row.state === 'done'),
    'the REVOKEs delivered',
    60_000,
  );
  t.true((await commands.listOfOperation('revoke:test-0')).every((row) => row.state === 'done'));

  const started = await start(b, b.moduleId, { cycle_ms: 5_000 });
  t.is(started.statusCode, 202, started.body);
  const { run } = started.json<{ run: ConformanceRunView }>();
  let latest = run;
  await waitFor(
    async () => {
      latest = (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}`)).json<{
        run: ConformanceRunView;
      }>().run;
      return latest.state !== 'running';
    },
    'the run to end',
    180_000,
  );
  t.is(latest.state, 'passed', JSON.stringify(latest.cases.filter((entry) => entry.result === 'fail')));
  t.regex(
    latest.cases.find((entry) => entry.name.startsWith('REVOKE at the 65th live entry'))?.got ?? '',
    /full at live entry 65\b/,
  );
});

test('a run from the page is kept: its source and labels, its cases as they end; after a restart on the same database its old routes read it from there, and a run the API left running is ended', async (t) => {
  const b = await bench(t);
  const started = await start(b, b.moduleId, {
    skip_wearing: true,
    protocol: 1,
    source: 'page',
    labels: { firmware: '1.4.2', hw: 'rev-b' },
  });
  t.is(started.statusCode, 202, started.body);
  const { run } = started.json<{ run: ConformanceRunView }>();
  const keptNow = (await request(b.app, b.token, 'GET', `/api/operator/runs/${run.id}`)).json<RunWithResults>();
  t.like(keptNow, {
    id: run.id,
    module_id: b.moduleId,
    kind: 'conformance',
    source: 'page',
    started_by: 'bench',
    target: 'mqtt',
    labels: { firmware: '1.4.2', hw: 'rev-b' },
    options: { skip_wearing: true, protocol: 1, answer_ms: 2_000, cycle_ms: 30_000 },
  });
  await waitFor(
    async () =>
      (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}`)).json<{ run: ConformanceRunView }>()
        .run.state !== 'running',
    'the run to end',
    120_000,
  );
  const view = (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}`)).json<{
    run: ConformanceRunView;
  }>().run;
  t.is(view.state, 'passed', JSON.stringify(view.cases.filter((entry) => entry.result === 'fail')));
  const junit = (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}/junit.xml`)).body;
  const json = (await request(b.app, b.token, 'GET', `/api/operator/conformance/${run.id}/report.json`)).body;
  const kept = (await request(b.app, b.token, 'GET', `/api/operator/runs/${run.id}`)).json<RunWithResults>();
  t.like(kept, { state: 'passed', summary: { total: view.summary.total, failed: 0, interrupted: false } });
  t.deepEqual(
    kept.results.map((result) => [result.name, result.result, result.ms]),
    view.cases.map((entry) => [entry.name, entry.result, entry.ms]),
  );
  t.deepEqual(kept.results[0]?.details, {
    step: view.cases[0]?.step,
    expected: view.cases[0]?.expected,
    got: view.cases[0]?.got,
    wearing: view.cases[0]?.wearing,
  });
  // The kept run's JUnit is the one the old route serves.
  t.is((await request(b.app, b.token, 'GET', `/api/operator/runs/${run.id}/junit`)).body, junit);

  // A run that a dead API process left running: no hold on its box.
  const orphan = 'orphan-run-1';
  await b.ctx.store.kysely
    .insertInto('runs')
    .values({
      id: orphan,
      module_id: b.moduleId,
      kind: 'conformance',
      source: 'api',
      started_by: 'bench',
      state: 'running',
      target: 'mqtt',
      started_at: Date.now(),
      ended_at: null,
      error: null,
      options: '{}',
      summary: null,
      report: null,
      updated_at: Date.now(),
    })
    .execute();

  // The API restarts on the same database file.
  const { databasePath } = b.ctx.config;
  await b.app.close();
  const again = await createService(configWith({ databasePath, scryptLog2N: TEST_SCRYPT_LOG2_N }), {
    clock: systemClock,
    startForwarding: false,
    startControl: false,
  });
  t.teardown(() => again.app.close());
  await again.app.ready();
  const reread = await request(again.app, b.token, 'GET', `/api/operator/conformance/${run.id}`);
  t.is(reread.statusCode, 200, reread.body);
  t.deepEqual(reread.json<{ run: ConformanceRunView }>().run, view);
  t.is((await request(again.app, b.token, 'GET', `/api/operator/conformance/${run.id}/junit.xml`)).body, junit);
  t.is((await request(again.app, b.token, 'GET', `/api/operator/conformance/${run.id}/report.json`)).body, json);
  t.deepEqual((await request(again.app, b.token, 'GET', `/api/operator/runs/${run.id}`)).json(), kept);
  const ended = (await request(again.app, b.token, 'GET', `/api/operator/runs/${orphan}`)).json<RunWithResults>();
  t.like(ended, { state: 'error', error: 'interrupted: the API stopped' });
  const oldRoute = (await request(again.app, b.token, 'GET', `/api/operator/conformance/${orphan}`)).json<{
    run: ConformanceRunView;
  }>().run;
  t.like(oldRoute, { state: 'error', error: 'interrupted: the API stopped', cases: [] });
  // Its files: it never reached the suite.
  t.is((await request(again.app, b.token, 'GET', `/api/operator/conformance/${orphan}/junit.xml`)).statusCode, 409);
  const cancel = await request(
    again.app,
    b.token,
    'POST',
    `/api/operator/boxes/${b.moduleId}/conformance/${run.id}/cancel`,
  );
  t.is(cancel.statusCode, 404);
});
