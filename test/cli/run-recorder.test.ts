// The recorder of `--record` (cli/service/run-recorder.ts) on a stepped
// clock against the real API (listening, SQLite): a run that posts nothing
// for KEEP_ALIVE_MS says it is still going with an empty post, so the
// service, which ends a command-line run quiet for 24 h, never takes a long
// soak for dead; its end stops the keep-alive.
import test from 'ava';
import { KEEP_ALIVE_MS, RunRecorder } from '../../cli/service/run-recorder.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { operatorService, type OperatorService } from '../helpers/operator-service.js';
import { waitFor } from '../helpers/wait.js';

test('a run quiet for an hour posts that it is still going; its end stops that', async (t) => {
  const service = await operatorService(t);
  const clock = new FakeClock(Date.now());
  const recorder = await RunRecorder.start(
    { service: { url: service.url, operatorToken: service.token, reservation: undefined }, source: 'cli', labels: {} },
    { module_id: service.moduleId, kind: 'soak', target: 'serial', labels: {}, options: {} },
    'parkbench soak',
    clock,
  );
  t.is(clock.pendingTimers, 1, 'the keep-alive is set');

  // A post in the hour: no keep-alive at its end.
  recorder.add({ name: 'answer_ms.p99<=250', result: 'pass', reason: null, ms: 0, value: 80 });
  await waitFor(async () => (await resultsOf(service)) === 1, 'the result posted');
  const afterResult = await updatedAt(service);
  clock.advance(KEEP_ALIVE_MS);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.is(await updatedAt(service), afterResult, 'a run that posted in the hour needs no keep-alive');

  // A quiet hour: an empty post, which the service takes as a sign of life.
  clock.advance(KEEP_ALIVE_MS);
  await waitFor(async () => (await updatedAt(service)) > afterResult, 'the keep-alive posted');
  t.is(await resultsOf(service), 1, 'a keep-alive adds no result');

  const outcome = await recorder.end({ state: 'passed' });
  t.true(outcome.recorded);
  t.is(clock.pendingTimers, 0, 'the end stops the keep-alive');
});

/** When the service last heard of the one run. */
async function updatedAt(service: OperatorService): Promise<number> {
  const row = await service.ctx.store.kysely.selectFrom('runs').select('updated_at').executeTakeFirstOrThrow();
  return row.updated_at;
}

/** The results the service holds of the one run. */
async function resultsOf(service: OperatorService): Promise<number> {
  const rows = await service.ctx.store.kysely.selectFrom('run_results').select('name').execute();
  return rows.length;
}
