// The suite through the real command line over MQTT: a real aedes broker, a
// simulated box connected to it (in process), commands on its command
// topic, responses matched by request_id, the barrier on the retained state
// topic. A box that answers too slowly fails the timing check; --protocol 1
// runs the version 1 cases alone.
import test from 'ava';
import { casesFor } from '../../conformance/cases/index.js';
import { brokerForTest } from '../helpers/broker.js';
import { runCli } from '../helpers/run-cli.js';
import { boxFile, keysOf, reportRows, RUN_CHECKS, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformance, simOnBroker } from '../helpers/conformance-mqtt-sim.js';

test('a simulated box on a real broker passes every case over MQTT; exit 0', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4201);
  const simulation = await simOnBroker(t, box, broker.url);
  const result = await runCli([
    'conformance',
    '--box',
    box.path,
    '--mqtt',
    broker.url,
    '--module-id',
    '4201',
    '--username',
    'operator',
    '--password',
    'pw',
    '--cycle-ms',
    '5000',
    '--json',
  ]);
  t.is(result.code, 0, result.stdout + result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.target, 'mqtt');
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(report.summary.failed, 0, JSON.stringify(report.results.filter((entry) => entry.result === 'fail')));
  t.regex(report.results[0]?.got ?? '', /^0x00, cycled in \d+ ms$/);
  // The garbage reached the box's command topic and was dropped, unanswered.
  t.true((simulation.boxes[0]?.mqtt?.counters.badMessages ?? 0) >= 4);
});

test('--protocol 1 runs the version 1 cases alone (20 and the 4 checks), and never touches the issuer keys', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4240, keysOf('both'));
  const simulation = await simOnBroker(t, box, broker.url);
  const result = await conformance(box, broker.url, ['--protocol', '1']);
  t.is(result.code, 0, result.stdout + result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.total, casesFor(box.provisioning, 1).length + RUN_CHECKS);
  t.is(report.summary.total, 24);
  t.is(report.summary.passed, 24);
  t.false(report.results.some((entry) => /SET_ISSUER|REVOKE|ACCESS_SIGNED/.test(entry.name)));
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKey, box.provisioning.issuerKey);
});

test('a box slower than --answer-ms fails the timing check, and only the checks that depend on time', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4202);
  // The suite measures on the system clock (it runs as a child process), so
  // the box is 4 times too slow rather than a few ms: an answer cannot come
  // sooner than its delay, and 400 ms stays well inside the suite's wait of
  // --answer-ms plus a second, so a loaded machine cannot turn the one
  // expected failure into a different set.
  await simOnBroker(t, box, broker.url, { settings: { faults: { delayMs: 400 } } });
  const result = await runCli([
    'conformance',
    '--box',
    box.path,
    '--mqtt',
    broker.url,
    '--answer-ms',
    '100',
    '--cycle-ms',
    '5000',
    '--json',
    '--skip-wearing',
  ]);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(
    failed.map((entry) => entry.name),
    ['every command answered within 100 ms'],
  );
  t.regex(failed[0]?.reason ?? '', /valid ACCESS opens; barrier OPENING then CLOSED: \d{3} ms/);
});
