// `parkbench conformance --record` through the real command line: the suite
// against a simulated box on a real aedes broker, recorded into the real API
// (listening, SQLite, system clock). The run is in GET /api/operator/runs
// while it runs, its cases posted as they end; it ends with the suite's
// verdict, the bench file's labels under --label's and the CI job's, and
// its JUnit, the very file --junit writes (each case's capture attached to
// its testcase, the whole run's to the testsuite). A service that cannot be reached does not fail the run; a box
// reserved by another operator refuses it before any case (exit 3), and
// the holder's token lets it through.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { freePort } from '../../lib/free-port.js';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { boxFile, type BoxFile, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformance, simOnBroker } from '../helpers/conformance-mqtt-sim.js';
import { operatorService, type OperatorService } from '../helpers/operator-service.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import type { Simulation } from '../../simulator/simulation.js';

interface RunView {
  id: string;
  module_id: number;
  kind: string;
  source: string;
  started_by: string;
  state: string;
  target: string;
  labels: Record<string, string>;
  ended_at: string | null;
  summary: Record<string, unknown> | null;
  results?: { name: string; result: string; ms: number; details: Record<string, unknown> }[];
}

interface RecordedReport extends JsonReport {
  record: { recorded: boolean; run_id: string | null; url: string | null; error: string | null };
}

interface Bench {
  service: OperatorService;
  box: BoxFile;
  brokerUrl: string;
  simulation: Simulation;
}

async function bench(t: ExecutionContext, moduleId: number): Promise<Bench> {
  const service = await operatorService(t, { moduleId });
  const broker = await brokerForTest(t);
  const box = await boxFile(t, moduleId);
  const simulation = await simOnBroker(t, box, broker.url);
  return { service, box, brokerUrl: broker.url, simulation };
}

async function runsOf(service: OperatorService): Promise<RunView[]> {
  const response = await service.call('GET', `/api/operator/runs?module_id=${service.moduleId}`);
  if (response.statusCode !== 200) throw new Error(`GET runs: ${response.statusCode} ${response.body}`);
  return response.json<{ runs: RunView[] }>().runs;
}

async function runOf(service: OperatorService, id: string): Promise<RunView> {
  const response = await service.call('GET', `/api/operator/runs/${id}`);
  if (response.statusCode !== 200) throw new Error(`GET run: ${response.statusCode} ${response.body}`);
  return response.json<RunView>();
}

function commandsReceived(simulation: Simulation): number {
  return simulation.boxes[0]?.box.counters.commandsReceived ?? -1;
}

test('--record: the run is listed while it runs, cases posted as they end; it ends with the verdict, the labels and its JUnit', async (t) => {
  const b = await bench(t, 4261);
  const benchFile = join(b.box.directory, 'bench.yaml');
  const junitFile = join(b.box.directory, 'junit.xml');
  await writeFile(
    benchFile,
    [
      'boxes:',
      '  - module_id: 4261',
      `    provisioning: ${b.box.path}`,
      `    link: { mqtt: "${b.brokerUrl}" }`,
      '    labels: { firmware: 1.0.0, hardware: rev-C }',
      '',
    ].join('\n'),
  );
  const cli = startCli(
    t,
    ['conformance', '--bench', benchFile, '--cycle-ms', '5000', '--json', '--record'].concat([
      '--label',
      'firmware=2.0.0',
      '--label',
      'build=42',
      '--capture',
      join(b.box.directory, 'run.pcapng'),
      '--capture-dir',
      join(b.box.directory, 'cases'),
      '--junit',
      junitFile,
    ]),
    b.service.env({ CI: 'true', CI_JOB_URL: 'https://ci.example/jobs/7' }),
  );
  // While it runs: listed, running, some cases in already.
  let live: RunView | undefined;
  await waitFor(
    async () => {
      const [run] = await runsOf(b.service);
      if (run === undefined || run.state !== 'running') return false;
      const withResults = await runOf(b.service, run.id);
      if (withResults.state !== 'running' || (withResults.results ?? []).length === 0) return false;
      live = withResults;
      return true;
    },
    'the run listed as running with its first cases',
    30_000,
  );
  t.like(live, { module_id: 4261, kind: 'conformance', state: 'running', ended_at: null });

  t.is(await cli.exited, 0, cli.stderr.join('\n'));
  const report = JSON.parse(cli.stdout.join('\n')) as RecordedReport;
  t.is(report.summary.failed, 0);
  const id = report.record.run_id ?? '';
  t.deepEqual(report.record, {
    recorded: true,
    run_id: live?.id ?? null,
    url: `${b.service.url}/api/operator/runs/${id}`,
    error: null,
  });
  const run = await runOf(b.service, id);
  t.like(run, { state: 'passed', kind: 'conformance', source: 'ci', started_by: 'ci', target: 'mqtt' });
  t.deepEqual(run.labels, {
    firmware: '2.0.0',
    hardware: 'rev-C',
    build: '42',
    ci_job_url: 'https://ci.example/jobs/7',
  });
  t.deepEqual(
    run.results?.map((result) => [result.name, result.result]),
    report.results.map((result) => [result.name, result.result]),
    'every case, in order, with its result',
  );
  t.like(run.summary, { total: report.summary.total, passed: report.summary.passed, failed: 0, interrupted: false });
  const junit = await b.service.call('GET', `/api/operator/runs/${id}/junit`);
  t.is(junit.statusCode, 200, junit.body);
  t.regex(String(junit.headers['content-type']), /xml/);
  t.is(junit.body.match(/<testcase /g)?.length, report.summary.total);
  // The same file as --junit's: a case's capture once, in its testcase; the run's in the testsuite.
  t.is(junit.body, await readFile(junitFile, 'utf8'));
  t.is(junit.body.match(/\[\[ATTACHMENT\|/g)?.length, report.results.filter((result) => result.capture).length + 1);
});

test('--record with the service down: the run runs and passes, one line says it is not recorded, --json has record.recorded false', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4262);
  await simOnBroker(t, box, broker.url);
  const url = `http://127.0.0.1:${await freePort()}`;
  const result = await runCli(
    [
      'conformance',
      '--box',
      box.path,
      '--mqtt',
      broker.url,
      '--cycle-ms',
      '5000',
      '--json',
      '--skip-wearing',
      '--record',
    ],
    { env: { PARKBENCH_URL: url, PARKBENCH_OPERATOR_TOKEN: 'op-token', CI: '' } },
  );
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, new RegExp(`^parkbench conformance: not recorded: cannot reach ${url}: .*ECONNREFUSED`, 'm'));
  t.is(result.stderr.split('\n').filter((line) => line.includes('not recorded')).length, 1);
  t.false(result.stderr.includes('op-token'));
  const report = JSON.parse(result.stdout) as RecordedReport;
  t.is(report.summary.failed, 0);
  t.like(report.record, { recorded: false, run_id: null, url: null });
  t.regex(report.record.error ?? '', /ECONNREFUSED/);
});

test('--record on a box another operator reserved: exit 3 naming the holder, no case ran; with your own reservation it records', async (t) => {
  const b = await bench(t, 4263);
  const held = await b.service.call('POST', `/api/operator/boxes/4263/reservation`, {
    token: b.service.aliceToken,
    payload: { ttl_seconds: 600, note: 'firmware flashing' },
  });
  t.is(held.statusCode, 201, held.body);
  const refused = await runCli(
    ['conformance', '--box', b.box.path, '--mqtt', b.brokerUrl, '--cycle-ms', '5000', '--json', '--record'],
    { env: b.service.env() },
  );
  t.is(refused.code, 3, refused.stderr);
  t.regex(
    refused.stderr,
    /^parkbench: box 4263 is reserved by alice \(firmware flashing\) until \d{4}-\d\d-\d\dT\S+\n$/,
  );
  t.is(refused.stdout, '', 'no report: no case ran');
  t.is(commandsReceived(b.simulation), 0, 'the box received nothing');
  t.deepEqual(await runsOf(b.service), []);

  const released = await b.service.call('DELETE', `/api/operator/boxes/4263/reservation`, {
    token: b.service.aliceToken,
    reservation: held.json<{ token: string }>().token,
  });
  t.is(released.statusCode, 204, released.body);
  const mine = await runCli(['reserve', '--box', '4263', '--ttl', '10m'], { env: b.service.env() });
  t.is(mine.code, 0, mine.stderr);
  // The service and both tokens as flags this time (the test's own environment has none of them).
  const recorded = await conformance(b.box, b.brokerUrl, [
    '--skip-wearing',
    '--record',
    '--service-url',
    b.service.url,
    '--operator-token',
    b.service.token,
    '--reservation',
    mine.stdout.trim(),
  ]);
  t.is(recorded.code, 0, recorded.stderr);
  t.like((JSON.parse(recorded.stdout) as RecordedReport).record, { recorded: true });
});

test('--record with a service that stops midway: the run goes on and passes, one line says it is not recorded, --json names the run', async (t) => {
  const b = await bench(t, 4264);
  const cli = startCli(
    t,
    ['conformance', '--box', b.box.path, '--mqtt', b.brokerUrl, '--cycle-ms', '5000', '--json', '--record'],
    b.service.env(),
  );
  await waitFor(async () => (await runsOf(b.service)).length === 1, 'the run posted', 30_000);
  await b.service.app.close();
  t.is(await cli.exited, 0, cli.stderr.join('\n'));
  t.is(
    cli.stderr.filter((line) => line.startsWith('parkbench conformance: not recorded: ')).length,
    1,
    cli.stderr.join('\n'),
  );
  const report = JSON.parse(cli.stdout.join('\n')) as RecordedReport;
  t.is(report.summary.failed, 0);
  t.like(report.record, { recorded: false });
  t.regex(report.record.run_id ?? '', /^\S+$/, 'the run that was posted');
  t.regex(report.record.error ?? '', /cannot reach|no answer/);
});

test('--record and Ctrl-C: exit 130, the run ends as an error with what ran, interrupted in its summary', async (t) => {
  const b = await bench(t, 4265);
  const cli = startCli(
    t,
    ['conformance', '--box', b.box.path, '--mqtt', b.brokerUrl, '--cycle-ms', '5000', '--json', '--record'],
    b.service.env(),
  );
  let id = '';
  await waitFor(
    async () => {
      const [run] = await runsOf(b.service);
      if (run === undefined) return false;
      id = run.id;
      return ((await runOf(b.service, run.id)).results ?? []).length > 0;
    },
    'the first case recorded',
    30_000,
  );
  t.is(await cli.stop('SIGINT'), 130, cli.stderr.join('\n'));
  const report = JSON.parse(cli.stdout.join('\n')) as RecordedReport;
  t.like(report.record, { recorded: true, run_id: id });
  const run = await runOf(b.service, id);
  t.like(run, { state: 'error', summary: { interrupted: true } });
  t.is(run.results?.length, report.results.length, 'every case that ran');
});
