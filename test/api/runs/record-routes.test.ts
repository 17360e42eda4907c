// Recording a run from the command line through the operator API (POST
// /api/operator/runs, .../results, .../end) and reading it back (GET
// /runs/{id}, its JUnit): the real app on its own database, an operator's
// token, a box of the database.
import test from 'ava';
import Fastify from 'fastify';
import { apiErrorHandler } from '../../../api/http/error-handler.js';
import { ApiError, errorBodySchema } from '../../../api/http/errors.js';
import { runRecordRoutes, Runs } from '../../../api/runs/index.js';
import { silentLogger } from '../../../lib/logger.js';
import { addOperator } from '../../../api/operators/accounts.js';
import type { RunView, RunWithResults } from '../../../api/runs/index.js';
import { assertWellFormedXml } from '../../helpers/conformance-fixtures.js';
import { errorBody, loggedIn, testApp, type TestApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { caseResult, operatorCall } from '../../helpers/runs.js';

async function setUp(t: Parameters<typeof testApp>[0]): Promise<{ app: TestApp; token: string; moduleId: number }> {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await seedParking(app, { boxes: ['entrance'] });
  return { app, token, moduleId: parking.entrance.moduleId };
}

function start(app: TestApp, token: string, body: Record<string, unknown>) {
  return operatorCall(app, token, 'POST', '/api/operator/runs', body);
}

test("a run recorded from the command line: started by the operator of the token, its results appended in order, ended with its summary; GET shows it, its JUnit is the suite writer's", async (t) => {
  const { app, token, moduleId } = await setUp(t);
  const before = app.ctx.events.headId;
  const started = await start(app, token, {
    module_id: moduleId,
    kind: 'conformance',
    source: 'ci',
    target: 'mqtt',
    labels: { firmware: '1.4.2', ci_job_url: 'https://ci.example/jobs/7' },
    options: { skip_wearing: true, protocol: 2, answer_ms: 2000, cycle_ms: 30000 },
  });
  t.is(started.statusCode, 201, started.body);
  const run = started.json<RunView & { results?: unknown }>();
  t.like(run, {
    module_id: moduleId,
    kind: 'conformance',
    source: 'ci',
    started_by: 'bench',
    state: 'running',
    target: 'mqtt',
    labels: { firmware: '1.4.2', ci_job_url: 'https://ci.example/jobs/7' },
    ended_at: null,
    error: null,
    summary: null,
    captures: [],
  });
  t.is(run.started_at, new Date(app.clock.now()).toISOString());
  t.is(run.results, undefined);
  t.regex(run.id, /^[A-Za-z0-9_-]{16}$/);

  const first = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/results`, {
    results: [caseResult({ name: 'access opens', result: 'pass', ms: 31 })],
  });
  t.is(first.statusCode, 200, first.body);
  t.is(first.json<{ results?: unknown }>().results, undefined);
  const more = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/results`, {
    results: [
      caseResult({ name: 'replay refused', result: 'fail', ms: 12, reason: 'the box opened' }),
      caseResult({ name: 'wearing', result: 'skip', ms: 0, reason: 'skip_wearing' }),
    ],
  });
  t.is(more.statusCode, 200, more.body);
  app.clock.advance(5_000);
  const running = await operatorCall(app, token, 'GET', `/api/operator/runs/${run.id}`);
  t.like(running.json<RunWithResults>(), { state: 'running', duration_ms: 5_000 });
  const early = await operatorCall(app, token, 'GET', `/api/operator/runs/${run.id}/junit`);
  t.is(early.statusCode, 409);
  t.like(errorBody(t, early), { error: 'operation_refused', details: [{ path: 'id' }] });

  const ended = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/end`, {
    state: 'failed',
    summary: { total: 3, passed: 1, failed: 1, skipped: 1, ms: 5_000, interrupted: false },
    report: {
      summary: {
        target: 'mqtt',
        module_id: moduleId,
        total: 3,
        passed: 1,
        failed: 1,
        skipped: 1,
        ms: 5_000,
        control_seq: { first: 10, next: 20 },
      },
      interrupted: false,
    },
    captures: ['/tmp/run/all.pcapng'],
  });
  t.is(ended.statusCode, 200, ended.body);
  const view = ended.json<RunWithResults>();
  t.like(view, { state: 'failed', duration_ms: 5_000, captures: ['/tmp/run/all.pcapng'], summary: { failed: 1 } });
  t.is(view.ended_at, new Date(app.clock.now()).toISOString());
  t.deepEqual(
    view.results.map((result) => [result.name, result.result, result.reason, result.ms, result.value]),
    [
      ['access opens', 'pass', null, 31, null],
      ['replay refused', 'fail', 'the box opened', 12, null],
      ['wearing', 'skip', 'skip_wearing', 0, null],
    ],
  );
  t.deepEqual(view.results[0]?.details, { step: '5.1', expected: 'OK', got: 'OK', wearing: false });

  const got = await operatorCall(app, token, 'GET', `/api/operator/runs/${run.id}`);
  t.is(got.statusCode, 200);
  t.deepEqual(got.json(), view);

  const junit = await operatorCall(app, token, 'GET', `/api/operator/runs/${run.id}/junit`);
  t.is(junit.statusCode, 200, junit.body);
  t.regex(String(junit.headers['content-type']), /^application\/xml/);
  assertWellFormedXml(junit.body);
  t.regex(junit.body, /<testsuites name="parkbench conformance" tests="3" failures="1" skipped="1" time="5.000">/);
  t.regex(junit.body, new RegExp(`<testsuite name="parkbench conformance \\(mqtt, module ${moduleId}\\)"`));
  t.regex(
    junit.body,
    /<testcase classname="conformance.mqtt" name="replay refused" time="0.012">\n {6}<failure message="the box opened">step: 5.1; expected: OK; got: BAD_TAG<\/failure>/,
  );
  t.regex(junit.body, /<skipped message="skip_wearing"\/>/);
  t.regex(junit.body, /\[\[ATTACHMENT\|\/tmp\/run\/all.pcapng\]\]/);

  // Each change was published on the event stream as a `run` event: the run as it was then, with its results.
  const published: [string, number][] = [];
  app.ctx.events.forEachAfter(before, (event) => {
    if (event.kind === 'run') {
      const seen = event.run as RunWithResults;
      published.push([seen.state, seen.results.length]);
    }
  });
  t.deepEqual(published, [
    ['running', 0],
    ['running', 1],
    ['running', 3],
    ['failed', 3],
  ]);

  // Ended: nothing more goes in.
  for (const [path, body] of [
    ['results', { results: [caseResult({ name: 'late', result: 'pass' })] }],
    ['end', { state: 'passed' }],
  ] as const) {
    const late = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/${path}`, body);
    t.is(late.statusCode, 409, `${path}: ${late.body}`);
    t.like(errorBody(t, late), { error: 'operation_refused', details: [{ path: 'id' }] });
  }
});

test("a soak run's JUnit: one testcase per limit, a failure naming the measured figure", async (t) => {
  const { app, token, moduleId } = await setUp(t);
  const started = await start(app, token, { module_id: moduleId, kind: 'soak', source: 'cli', target: 'serial' });
  const run = started.json<RunView>();
  await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/results`, {
    results: [
      { name: 'failures == 0', result: 'pass', ms: 0, value: 0, details: { expression: 'failures == 0' } },
      { name: 'answer_ms.p99 < 500', result: 'fail', ms: 0, value: 812.5, details: { unit: 'ms' } },
    ],
  });
  const ended = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/end`, {
    state: 'failed',
    summary: { target: 'serial', module_id: moduleId, cycles: 400, failures: 0, ms: 60_000, rate: 6.7, passed: false },
  });
  t.is(ended.statusCode, 200, ended.body);
  t.is(ended.json<RunWithResults>().results[1]?.value, 812.5);
  const junit = await operatorCall(app, token, 'GET', `/api/operator/runs/${run.id}/junit`);
  t.is(junit.statusCode, 200, junit.body);
  assertWellFormedXml(junit.body);
  t.regex(junit.body, /<testsuites name="parkbench soak" tests="2" failures="1" time="60.000">/);
  t.regex(junit.body, new RegExp(`parkbench soak \\(serial, module ${moduleId}, 400 cycles\\)`));
  t.regex(junit.body, /<testcase classname="soak.serial" name="failures == 0" time="0.000"\/>/);
  t.regex(
    junit.body,
    /<failure message="answer_ms.p99 &lt; 500: measured 812.5">answer_ms.p99 &lt; 500: measured 812.5 over 400 cycles<\/failure>/,
  );
});

test('bad input is a 4xx naming the field, and nothing is written', async (t) => {
  const { app, token, moduleId } = await setUp(t);
  const good = { module_id: moduleId, kind: 'conformance', source: 'cli', target: 'mqtt' };
  const cases: [Record<string, unknown>, number, string][] = [
    [{ ...good, module_id: 'x' }, 422, 'module_id'],
    [{ ...good, module_id: -1 }, 422, 'module_id'],
    [{ ...good, kind: 'fuzz' }, 422, 'kind'],
    [{ ...good, source: 'page' }, 422, 'source'],
    [{ ...good, target: 'carrier-pigeon' }, 422, 'target'],
    [{ ...good, labels: { 'bad name': 'x' } }, 422, 'labels'],
    [{ ...good, labels: { firmware: 'x'.repeat(513) } }, 422, 'labels.firmware'],
    [
      { ...good, labels: Object.fromEntries(Array.from({ length: 33 }, (_, index) => [`l${index}`, 'x'])) },
      422,
      'labels',
    ],
    [{ ...good, labels: { ['n'.repeat(65)]: 'x' } }, 422, 'labels'],
    [{ ...good, options: 'fast' }, 422, 'options'],
    [{ ...good, started_at: 'yesterday' }, 422, 'started_at'],
    [{ ...good, started_at: '2999-01-01T00:00:00Z' }, 422, 'started_at'],
    [{ kind: 'conformance', source: 'cli', target: 'mqtt' }, 422, 'module_id'],
    [{ ...good, module_id: 999_999 }, 404, 'module_id'],
  ];
  for (const [body, status, path] of cases) {
    const response = await start(app, token, body);
    t.is(response.statusCode, status, `${JSON.stringify(body).slice(0, 80)}: ${response.body}`);
    t.true(
      errorBody(t, response).details.some(
        (detail) => detail.path === path || detail.path.startsWith(`${path}.`) || path.startsWith(detail.path),
      ),
      `${path}: ${response.body}`,
    );
  }
  const list = await operatorCall(app, token, 'GET', '/api/operator/runs');
  t.deepEqual(list.json<{ runs: unknown[] }>().runs, []);
  // started_by is the operator of the token, whatever the body says.
  const claimed = await start(app, token, { ...good, started_by: 'someone else' });
  t.like(claimed.json<RunView>(), { started_by: 'bench' });

  const run = (await start(app, token, good)).json<RunView>();
  const result = caseResult({ name: 'ok', result: 'pass' });
  const badResults: [unknown, string][] = [
    [{}, 'results'],
    [{ results: Array.from({ length: 501 }, () => result) }, 'results'],
    [{ results: [{ ...result, name: '' }] }, 'results[0].name'],
    [{ results: [{ ...result, name: 'n'.repeat(201) }] }, 'results[0].name'],
    [{ results: [{ ...result, result: 'passed' }] }, 'results[0].result'],
    [{ results: [{ ...result, ms: -1 }] }, 'results[0].ms'],
    [{ results: [{ ...result, ms: 'fast' }] }, 'results[0].ms'],
    [{ results: [{ ...result, reason: 'r'.repeat(2001) }] }, 'results[0].reason'],
    [{ results: [{ ...result, value: 'high' }] }, 'results[0].value'],
    [{ results: [{ ...result, details: [] }] }, 'results[0].details'],
  ];
  for (const [body, path] of badResults) {
    const response = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/results`, body);
    t.is(response.statusCode, 422, `${path}: ${response.body}`);
    t.true(
      errorBody(t, response).details.some((detail) => detail.path === path || detail.path.startsWith(path)),
      `${path}: ${response.body}`,
    );
  }
  const badEnds: [unknown, string][] = [
    [{}, 'state'],
    [{ state: 'running' }, 'state'],
    [{ state: 'passed', summary: 3 }, 'summary'],
    [{ state: 'passed', report: 'xml' }, 'report'],
    [{ state: 'error', error: 'e'.repeat(2001) }, 'error'],
    [{ state: 'passed', captures: [''] }, 'captures[0]'],
    [{ state: 'passed', captures: Array.from({ length: 1001 }, () => '/a') }, 'captures'],
  ];
  for (const [body, path] of badEnds) {
    const response = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/end`, body);
    t.is(response.statusCode, 422, `${path}: ${response.body}`);
    t.true(
      errorBody(t, response).details.some((detail) => detail.path.startsWith(path)),
      `${path}: ${response.body}`,
    );
  }
  const unknown = await operatorCall(app, token, 'POST', '/api/operator/runs/nosuchrun/results', { results: [result] });
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), { error: 'resource_not_found', details: [{ path: 'id' }] });
  const badId = await operatorCall(app, token, 'GET', '/api/operator/runs/not%20an%20id');
  t.is(badId.statusCode, 422);
  t.is(errorBody(t, badId).details[0]?.path, 'id');
  // The run is as it was started: nothing of the refused calls went in.
  const kept = await operatorCall(app, token, 'GET', `/api/operator/runs/${run.id}`);
  t.like(kept.json<RunWithResults>(), { state: 'running', results: [] });
  // No results at all is a call that says the run is still going.
  const alive = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/results`, { results: [] });
  t.is(alive.statusCode, 200, alive.body);
  t.like(alive.json<RunView>(), { state: 'running' });
});

test("another operator's run is not there for their recording (404), though anyone may read it; a driver's token is 403 on every route", async (t) => {
  const { app, token, moduleId } = await setUp(t);
  const other = await addOperator(app.ctx.store, 'other', app.clock.now());
  const run = (
    await start(app, token, { module_id: moduleId, kind: 'conformance', source: 'cli', target: 'mqtt' })
  ).json<RunView>();
  const result = caseResult({ name: 'ok', result: 'pass' });
  for (const [path, body] of [
    ['results', { results: [result] }],
    ['end', { state: 'passed' }],
  ] as const) {
    const response = await operatorCall(app, other.token, 'POST', `/api/operator/runs/${run.id}/${path}`, body);
    t.is(response.statusCode, 404, response.body);
    t.like(errorBody(t, response), { error: 'resource_not_found', details: [{ path: 'id' }] });
  }
  const read = await operatorCall(app, other.token, 'GET', `/api/operator/runs/${run.id}`);
  t.like(read.json<RunWithResults>(), { started_by: 'bench', state: 'running', results: [] });

  const driver = await loggedIn(app);
  for (const [method, url, body] of [
    ['GET', '/api/operator/runs', undefined],
    ['GET', `/api/operator/runs/${run.id}`, undefined],
    ['GET', `/api/operator/runs/${run.id}/junit`, undefined],
    ['GET', `/api/operator/runs/compare?a=${run.id}&b=${run.id}`, undefined],
    ['POST', '/api/operator/runs', { module_id: moduleId, kind: 'conformance', source: 'cli', target: 'mqtt' }],
    ['POST', `/api/operator/runs/${run.id}/results`, { results: [result] }],
    ['POST', `/api/operator/runs/${run.id}/end`, { state: 'passed' }],
  ] as const) {
    const response = await operatorCall(app, driver.access_token, method, url, body);
    t.is(response.statusCode, 403, `${method} ${url}: ${response.body}`);
    t.is(errorBody(t, response).error, 'operator_required');
  }
  const anonymous = await app.app.inject({ method: 'GET', url: '/api/operator/runs' });
  t.is(anonymous.statusCode, 401);
});

test('POST /runs asks its reservation guard first: what the guard throws is the answer, and nothing is written', async (t) => {
  const { app, token, moduleId } = await setUp(t);
  const runs = new Runs({
    store: app.ctx.store,
    clock: app.clock,
    config: app.config,
    events: app.ctx.events,
    logger: silentLogger,
  });
  const asked: number[] = [];
  const guarded = Fastify();
  guarded.decorateRequest('operator', null);
  guarded.addHook('onRequest', (request, _reply, done) => {
    request.operator = { id: 1, name: 'bench', tokenHash: Buffer.alloc(32) };
    done();
  });
  guarded.addSchema(errorBodySchema);
  guarded.setErrorHandler(apiErrorHandler);
  runRecordRoutes(
    guarded,
    {
      runs,
      checkReservation: (reserved) => {
        asked.push(reserved);
        return Promise.reject(new ApiError('box_reserved', `box ${reserved} is reserved by ci`));
      },
    },
    () => app.clock.now(),
  );
  t.teardown(() => guarded.close());
  const refused = await guarded.inject({
    method: 'POST',
    url: '/runs',
    payload: { module_id: moduleId, kind: 'conformance', source: 'ci', target: 'mqtt' },
  });
  t.is(refused.statusCode, 409, refused.body);
  t.is(refused.json<{ error: string }>().error, 'box_reserved');
  t.deepEqual(asked, [moduleId]);
  const list = await operatorCall(app, token, 'GET', '/api/operator/runs');
  t.deepEqual(list.json<{ runs: unknown[] }>().runs, []);
});
