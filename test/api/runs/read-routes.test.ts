// GET /api/operator/runs (pages, filters, bad query values) and
// /runs/compare over HTTP: the real app on its own database, runs recorded
// through the operator API as the command line records them.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import type { RunView } from '../../../api/runs/index.js';
import type { Comparison } from '../../../api/runs/index.js';
import { errorBody, testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { operatorCall, recordRun } from '../../helpers/runs.js';

interface Page {
  runs: RunView[];
  next_cursor: string | null;
}

test('GET /runs: every page of many runs newest first through next_cursor, the label filters all matching, verdict, box and kind', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await seedParking(app, { boxes: ['entrance', 'exit'] });
  const ids: string[] = [];
  const started = new Map<string, string>();
  for (let index = 0; index < 45; index++) {
    const box = index % 3 === 0 ? parking.exit : parking.entrance;
    const run = await recordRun(app, token, box.moduleId, [{ name: 'a', result: index % 4 === 0 ? 'fail' : 'pass' }], {
      labels: { firmware: `1.${index % 2}`, bench: index < 20 ? 'lab' : 'ci' },
      ...(index % 9 === 0 ? { kind: 'soak' as const } : {}),
    });
    ids.push(run.id);
    started.set(run.id, run.started_at);
    // Two runs a second: the id orders those of one time.
    app.clock.advance(index % 2 === 0 ? 0 : 1_000);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const url: string = `/api/operator/runs?limit=7${cursor === null ? '' : `&cursor=${cursor}`}`;
    const response = await operatorCall(app, token, 'GET', url);
    t.is(response.statusCode, 200, response.body);
    const page = response.json<Page>();
    t.true(page.runs.length <= 7);
    seen.push(...page.runs.map((run) => run.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor !== null);
  t.is(pages, 7);
  const newestFirst = [...ids].sort(
    (x, y) => (started.get(y) ?? '').localeCompare(started.get(x) ?? '') || (y < x ? -1 : 1),
  );
  t.deepEqual(seen, newestFirst);
  const defaultPage = (await operatorCall(app, token, 'GET', '/api/operator/runs')).json<Page>();
  t.is(defaultPage.runs.length, 20);
  t.false('results' in (defaultPage.runs[0] ?? {}));

  const filtered = (
    await operatorCall(app, token, 'GET', '/api/operator/runs?label=firmware=1.0&label=bench=lab&limit=100')
  ).json<Page>();
  t.deepEqual(
    filtered.runs.map((run) => run.id).sort(),
    ids.filter((_, index) => index % 2 === 0 && index < 20).sort(),
  );
  const one = (await operatorCall(app, token, 'GET', '/api/operator/runs?label=bench=ci&limit=100')).json<Page>();
  t.is(one.runs.length, 25);
  const failed = (await operatorCall(app, token, 'GET', '/api/operator/runs?verdict=failed&limit=100')).json<Page>();
  t.deepEqual(failed.runs.map((run) => run.id).sort(), ids.filter((_, index) => index % 4 === 0).sort());
  const ofExit = (
    await operatorCall(app, token, 'GET', `/api/operator/runs?module_id=${parking.exit.moduleId}&kind=soak&limit=100`)
  ).json<Page>();
  t.deepEqual(ofExit.runs.map((run) => run.id).sort(), ids.filter((_, index) => index % 9 === 0).sort());

  for (const [query, path] of [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=x', 'limit'],
    ['verdict=ok', 'verdict'],
    ['kind=bench', 'kind'],
    ['module_id=-3', 'module_id'],
    ['label=firmware', 'label'],
    ['label=bad%20name=1', 'label'],
    [`cursor=${Buffer.from('bl1.12').toString('base64url')}`, 'cursor'],
    ['cursor=%2A%2A', 'cursor'],
  ] as const) {
    const response = await operatorCall(app, token, 'GET', `/api/operator/runs?${query}`);
    t.is(response.statusCode, 422, `${query}: ${response.body}`);
    t.true(
      errorBody(t, response).details.some((detail) => detail.path === path),
      `${query}: ${response.body}`,
    );
  }
  const unknown = await operatorCall(app, token, 'GET', '/api/operator/runs/nosuchrun');
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), { error: 'resource_not_found', details: [{ path: 'id' }] });
});

test('GET /runs/compare: the regressed cases named first, the figures; a or b missing 400, unknown 404, two kinds 409', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const moduleId = (await seedParking(app, { boxes: ['entrance'] })).entrance.moduleId;
  const before = await recordRun(app, token, moduleId, [
    { name: 'access opens', result: 'pass', ms: 30 },
    { name: 'replay refused', result: 'pass', ms: 20 },
    { name: 'bad tag refused', result: 'fail', ms: 20 },
  ]);
  const after = await recordRun(app, token, moduleId, [
    { name: 'access opens', result: 'pass', ms: 90 },
    { name: 'replay refused', result: 'fail', ms: 20 },
    { name: 'bad tag refused', result: 'pass', ms: 20 },
    { name: 'time set', result: 'pass', ms: 20 },
  ]);
  const response = await operatorCall(app, token, 'GET', `/api/operator/runs/compare?a=${before.id}&b=${after.id}`);
  t.is(response.statusCode, 200, response.body);
  const comparison = response.json<Comparison>();
  t.is(comparison.a.id, before.id);
  t.is(comparison.b.id, after.id);
  t.deepEqual(
    comparison.cases.map((entry) => [entry.name, entry.change]),
    [
      ['replay refused', 'regressed'],
      ['bad tag refused', 'fixed'],
      ['time set', 'new'],
      ['access opens', 'same'],
    ],
  );
  t.deepEqual(comparison.counts, { regressed: 1, fixed: 1, same: 1, new: 1, gone: 0 });
  t.deepEqual(comparison.figures, [
    { name: 'passed', a: 2, b: 3, delta: 1 },
    { name: 'total', a: 3, b: 4, delta: 1 },
    { name: 'ms:access opens', a: 30, b: 90, delta: 60 },
  ]);

  for (const [query, paths] of [
    [`a=${before.id}`, ['b']],
    [`b=${after.id}`, ['a']],
    ['', ['a', 'b']],
  ] as const) {
    const missing = await operatorCall(app, token, 'GET', `/api/operator/runs/compare?${query}`);
    t.is(missing.statusCode, 400, missing.body);
    t.like(errorBody(t, missing), { error: 'missing_parameter' });
    t.deepEqual(
      errorBody(t, missing).details.map((detail) => detail.path),
      [...paths],
    );
  }
  const unknown = await operatorCall(app, token, 'GET', `/api/operator/runs/compare?a=${before.id}&b=nosuchrun`);
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), { error: 'resource_not_found', details: [{ path: 'b' }] });
  const soak = await recordRun(app, token, moduleId, [{ name: 'failures == 0', result: 'pass' }], { kind: 'soak' });
  const kinds = await operatorCall(app, token, 'GET', `/api/operator/runs/compare?a=${before.id}&b=${soak.id}`);
  t.is(kinds.statusCode, 409);
  t.like(errorBody(t, kinds), { error: 'operation_refused', details: [{ path: 'b' }] });
  const bad = await operatorCall(app, token, 'GET', '/api/operator/runs/compare?a=%2A&b=x');
  t.is(bad.statusCode, 422);
  t.is(errorBody(t, bad).details[0]?.path, 'a');
});

test('GET /runs/compare of two soak runs: a limit whose measured value moved is among the figures, named after its expression', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const moduleId = (await seedParking(app, { boxes: ['entrance'] })).entrance.moduleId;
  const soak = (p99: number) =>
    recordRun(
      app,
      token,
      moduleId,
      [
        { name: 'failures == 0', result: 'pass', ms: 0, value: 0 },
        { name: 'answer_ms.p99<=250', result: 'pass', ms: 0, value: p99 },
      ],
      { kind: 'soak', summary: { cycles: 400, failures: 0, rate: 6.5, passed: true } },
    );
  const before = await soak(80);
  const after = await soak(140);
  const response = await operatorCall(app, token, 'GET', `/api/operator/runs/compare?a=${before.id}&b=${after.id}`);
  t.is(response.statusCode, 200, response.body);
  const comparison = response.json<Comparison>();
  t.deepEqual(comparison.figures, [{ name: 'value:answer_ms.p99<=250', a: 80, b: 140, delta: 60 }]);
  t.like(
    comparison.cases.find((entry) => entry.name === 'answer_ms.p99<=250'),
    { change: 'same', a: { value: 80 }, b: { value: 140 } },
  );
});
