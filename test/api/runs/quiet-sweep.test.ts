// A command-line run whose client died, ended while the API runs: the real
// app on its own database (the store of PARKBENCH_TEST_STORE), runs recorded
// through the operator API, the operator event stream read over a real
// socket, the app's clock stepped past QUIET_RUN_MS.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { QUIET_ERROR, Runs, type RunView, type RunWithResults } from '../../../api/runs/index.js';
import { QUIET_RUN_MS, QUIET_SWEEP_MAX_WAIT_MS } from '../../../api/runs/runs.js';
import { silentLogger } from '../../../lib/logger.js';
import { testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { caseResult, operatorCall } from '../../helpers/runs.js';
import { openSse, type SseMessage } from '../../helpers/sse-client.js';
import { waitFor } from '../../helpers/wait.js';

test("a command-line run that goes quiet past the bound is ended error while the API runs, and the stream tells it; one posted to lately and the API's own run stay running", async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await seedParking(app, { boxes: ['entrance', 'exit'] });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const stream = await openSse(t, base, '/api/operator/events', { authorization: `Bearer ${token}` });
  await stream.next((message) => message.event === 'snapshot', 'the snapshot');

  const startRun = async (moduleId: number, source: 'cli' | 'ci') => {
    const started = await operatorCall(app, token, 'POST', '/api/operator/runs', {
      module_id: moduleId,
      kind: 'conformance',
      source,
      target: 'mqtt',
    });
    t.is(started.statusCode, 201, started.body);
    return started.json<RunView>();
  };
  const silent = await startRun(parking.entrance.moduleId, 'cli');
  const talking = await startRun(parking.exit.moduleId, 'ci');
  // A run of the API with no hold on its box: the sweep leaves it to the start-up recovery.
  const page = await new Runs({
    store: app.ctx.store,
    clock: app.clock,
    config: app.config,
    events: app.ctx.events,
    logger: silentLogger,
  }).start({
    moduleId: parking.exit.moduleId,
    kind: 'conformance',
    source: 'page',
    startedBy: 'bench',
    target: 'mqtt',
  });

  // A bound less an hour on, `talking` posts a result; `silent` has posted nothing.
  await app.clock.advanceAsync(QUIET_RUN_MS - QUIET_SWEEP_MAX_WAIT_MS, 60_000);
  const posted = await operatorCall(app, token, 'POST', `/api/operator/runs/${talking.id}/results`, {
    results: [caseResult({ name: 'access opens', result: 'pass' })],
  });
  t.is(posted.statusCode, 200, posted.body);
  const read = async (id: string) =>
    (await operatorCall(app, token, 'GET', `/api/operator/runs/${id}`)).json<RunWithResults>();
  t.is((await read(silent.id)).state, 'running');

  const from = stream.messages.length;
  await app.clock.advanceAsync(QUIET_SWEEP_MAX_WAIT_MS + 60_000, 60_000);
  // The stream sends what was published at its next flush, on the app's
  // clock: stepped a flush at a time until the sweep's end is sent.
  const isSilentEnded = (message: SseMessage) =>
    message.event === 'run' && (message.data as { run: RunView }).run.id === silent.id;
  await waitFor(async () => {
    await app.clock.advanceAsync(app.config.eventsFlushMs);
    return stream.messages.slice(from).some(isSilentEnded);
  }, 'the silent run ended on the stream');
  const told = await stream.next(isSilentEnded, 'the silent run ended on the stream', from);
  const ended = await read(silent.id);
  t.like(ended, { state: 'error', error: QUIET_ERROR, results: [] });
  t.like((told.data as { run: RunView }).run, { state: 'error', error: QUIET_ERROR, ended_at: ended.ended_at });
  t.like(await read(talking.id), { state: 'running', error: null });
  t.like(await read(page.id), { state: 'running', error: null });
  t.false(
    stream.messages
      .slice(from)
      .map((message) => (message.event === 'run' ? (message.data as { run: RunView }).run : undefined))
      .some((run) => run !== undefined && run.id !== silent.id && run.state !== 'running'),
    'no other run was told ended',
  );
  // Its client comes back too late: the run has ended.
  const late = await operatorCall(app, token, 'POST', `/api/operator/runs/${silent.id}/end`, { state: 'passed' });
  t.is(late.statusCode, 409, late.body);
});

test('the sweep stops when the app closes', async (t) => {
  const app = await testApp(t);
  await app.clock.advanceAsync(0);
  const before = app.clock.pendingTimers;
  t.true(before >= 1, 'the sweep is armed');
  await app.app.close();
  t.is(app.clock.pendingTimers, 0);
});
