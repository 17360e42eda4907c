// The version 2 cases against a wrong box, through the real command line
// over MQTT: a box with the bug of step 4 or of step 8a fails exactly the
// cases of that step, and gets its issuer keys back all the same; a run cut
// short by SIGINT puts them back too.
import test from 'ava';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { waitFor } from '../helpers/wait.js';
import { boxFile, keysOf, reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformance, failedNames, simOnBroker } from '../helpers/conformance-mqtt-sim.js';

test('a box with the accept-revoked bug (step 8a) fails exactly the REVOKED case; its issuer keys are put back all the same', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4220, keysOf('both'));
  const simulation = await simOnBroker(t, box, broker.url, { bugs: ['accept-revoked'] });
  const result = await conformance(box, broker.url);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.deepEqual(failedNames(report), ['a revoked key is REVOKED and spends no try']);
  const failed = report.results.find((entry) => entry.result === 'fail');
  t.is(failed?.expected, '0x00, 0x16, 0x16, 0x16');
  t.is(failed?.got, '0x00, 0x00, 0x12, 0x12');
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKey, box.provisioning.issuerKey);
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKeyPrevious, box.provisioning.issuerKeyPrevious);
});

test('a box with the accept-any-signature bug (step 4) fails exactly the cases of a bad signature', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4221, keysOf('signed'));
  await simOnBroker(t, box, broker.url, { bugs: ['accept-any-signature'] });
  const result = await conformance(box, broker.url);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.deepEqual(failedNames(report), [
    'ACCESS_SIGNED with a flipped byte of its body (last module id)',
    'ACCESS_SIGNED with a flipped byte of its header (key_id, then nonce)',
    'ACCESS_SIGNED with a flipped byte of its signature (r, then s)',
    'ACCESS_SIGNED by an issuer the box does not hold',
    'after SET_ISSUER(new, none) the previous issuer is refused, the new one opens',
  ]);
});

test("SIGINT in the middle of a run: the box's issuer keys are put back, what ran is reported, exit 130", async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4230, keysOf('signed'));
  // Slow answers, so the run is still going when the signal comes.
  const simulation = await simOnBroker(t, box, broker.url, { settings: { faults: { delayMs: 100 } } });
  const state = () => simulation.boxes[0]?.box.state;
  const run = startCli(t, ['conformance', '--box', box.path, '--mqtt', broker.url, '--cycle-ms', '5000', '--json']);
  await waitFor(
    () => !Buffer.from(state()?.issuerKey ?? []).equals(box.provisioning.issuerKey ?? Buffer.alloc(0)),
    "the suite's issuers on the box",
    90_000,
  );
  t.is(await run.stop('SIGINT'), 130, run.stderr.join('\n'));
  t.deepEqual(state()?.issuerKey, box.provisioning.issuerKey);
  t.deepEqual(state()?.issuerKeyPrevious, box.provisioning.issuerKeyPrevious);
  const report = JSON.parse(run.stdout.join('\n')) as JsonReport;
  t.true(report.interrupted);
  t.true(report.summary.total < reportRows(box.provisioning));
  t.is(report.results.find((entry) => entry.name === "SET_ISSUER puts the box's issuer keys back")?.result, 'pass');
  t.regex(run.stderr.join('\n'), /interrupted \(SIGINT\); putting the box's issuer keys back/);
});
