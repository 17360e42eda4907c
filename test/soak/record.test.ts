// `parkbench soak --record` through the real command line: a soak over
// MQTT against a simulated box on a real aedes broker, recorded into the
// real API (listening, SQLite, system clock): the run posted at its start,
// each limit a result at its end (named by its expression, its figure as
// value, ms 0), and the summary.
import test from 'ava';
import { brokerForTest } from '../helpers/broker.js';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { simOnBroker } from '../helpers/conformance-mqtt-sim.js';
import { operatorService } from '../helpers/operator-service.js';
import { runCli } from '../helpers/run-cli.js';

interface RunView {
  kind: string;
  source: string;
  state: string;
  target: string;
  labels: Record<string, string>;
  options: Record<string, unknown>;
  summary: Record<string, unknown> | null;
  results: { name: string; result: string; reason: string | null; ms: number; value: number | null }[];
}

test('soak --record: the run with its limits as results and its summary', async (t) => {
  const service = await operatorService(t, { moduleId: 5461 });
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 5461);
  await simOnBroker(t, box, broker.url, {
    barrierTimings: { openingMs: 20, openHoldMs: 20, closingMs: 20 },
    settings: { batteryMv: 12_000 },
  });
  const result = await runCli(
    [
      'soak',
      '--box',
      box.path,
      '--mqtt',
      broker.url,
      '--cycles',
      '10',
      '--cycle-ms',
      '3000',
      '--json',
      '--record',
    ].concat(['--limit', 'answer_ms.p99<=1500', '--limit', 'cycle_ms.min>=1000000', '--label', 'firmware=3.1']),
    { env: service.env() },
  );
  t.is(result.code, 1, 'cycle_ms.min>=1000000 fails');
  const json = JSON.parse(result.stdout) as {
    verdicts: { limit: string; actual: number | null; passed: boolean }[];
    record: { recorded: boolean; run_id: string | null };
  };
  t.true(json.record.recorded, result.stderr);
  const response = await service.call('GET', `/api/operator/runs/${json.record.run_id ?? ''}`);
  t.is(response.statusCode, 200, response.body);
  const run = response.json<RunView>();
  t.like(run, { kind: 'soak', source: 'cli', state: 'failed', target: 'mqtt', labels: { firmware: '3.1' } });
  t.like(run.options, { cycles: 10, limits: ['failures==0', 'answer_ms.p99<=1500', 'cycle_ms.min>=1000000'] });
  t.like(run.summary, { cycles: 10, failures: 0, passed: false, interrupted: false });
  t.deepEqual(
    run.results.map((each) => [each.name, each.result, each.ms, each.value]),
    json.verdicts.map((verdict) => [verdict.limit, verdict.passed ? 'pass' : 'fail', 0, verdict.actual]),
  );
  t.regex(run.results[2]?.reason ?? '', /^measured \d+/);
  const junit = await service.call('GET', `/api/operator/runs/${json.record.run_id ?? ''}/junit`);
  t.is(junit.statusCode, 200, junit.body);
  t.is(junit.body.match(/<testcase /g)?.length, 3, 'a testcase per limit');
});

test('soak --record on a box another operator reserved: exit 3 naming the holder, no cycle ran, no run kept', async (t) => {
  const service = await operatorService(t, { moduleId: 5462 });
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 5462);
  const simulation = await simOnBroker(t, box, broker.url, { settings: { batteryMv: 12_000 } });
  const held = await service.call('POST', '/api/operator/boxes/5462/reservation', {
    token: service.aliceToken,
    payload: { ttl_seconds: 600 },
  });
  t.is(held.statusCode, 201, held.body);
  const result = await runCli(['soak', '--box', box.path, '--mqtt', broker.url, '--cycles', '5', '--record'], {
    env: service.env(),
  });
  t.is(result.code, 3, result.stderr);
  t.regex(result.stderr, /^parkbench: box 5462 is reserved by alice until \S+\n$/);
  t.is(simulation.boxes[0]?.box.counters.commandsReceived, 0);
  const runs = await service.call('GET', '/api/operator/runs?module_id=5462');
  t.deepEqual(runs.json<{ runs: unknown[] }>().runs, []);
});
