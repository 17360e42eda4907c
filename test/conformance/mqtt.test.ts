// The suite through the real command line over MQTT: a real aedes broker, a
// simulated box connected to it (in process), commands on its command
// topic, responses matched by request_id, the barrier on the retained state
// topic. A box that answers too slowly fails the timing check. Version 2: a
// box of a sealed parking, of a signed one and one holding both pass; the
// suite leaves the box's issuer keys as they were, also after a failed run;
// a box with the bug of step 4 or 8a fails exactly the cases of that step.
import test, { type ExecutionContext } from 'ava';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { Simulation, type SimulationOptions } from '../../simulator/simulation.js';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { boxFile, FAST_BARRIER, keysOf, reportRows, type BoxFile, type BoxKind, type JsonReport } from './fixtures.js';

async function simOnBroker(t: ExecutionContext, box: BoxFile, url: string, extra: Partial<SimulationOptions> = {}): Promise<Simulation> {
  const simulation = await Simulation.start({
    members: [{ provisioning: box.provisioning, settings: {} }],
    clock: systemClock,
    stateDir: null,
    barrierTimings: FAST_BARRIER,
    mqtt: { url, topics: new Topics() },
    ...extra,
  });
  t.teardown(() => simulation.stop());
  return simulation;
}

function conformance(box: BoxFile, url: string, extra: readonly string[] = []) {
  return runCli(['conformance', '--box', box.path, '--mqtt', url, '--username', 'operator', '--password', 'pw', '--cycle-ms', '5000', '--json', ...extra]);
}

function failedNames(report: JsonReport): string[] {
  return report.results.filter((entry) => entry.result === 'fail').map((entry) => entry.name);
}

const SKIPPED_POWER_CYCLE = { name: 'issuer keys, revocations, tries and the control sequence survive a power cycle', reason: 'the target cannot restart the box' };

test('a simulated box on a real broker passes every case over MQTT; exit 0', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4201);
  const simulation = await simOnBroker(t, box, broker.url);
  const result = await runCli(['conformance', '--box', box.path, '--mqtt', broker.url, '--module-id', '4201', '--username', 'operator', '--password', 'pw', '--cycle-ms', '5000', '--json']);
  t.is(result.code, 0, result.stdout + result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.target, 'mqtt');
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(report.summary.failed, 0, JSON.stringify(report.results.filter((entry) => entry.result === 'fail')));
  t.regex(report.results[0]?.got ?? '', /^0x00, cycled in \d+ ms$/);
  // The garbage reached the box's command topic and was dropped, unanswered.
  t.true((simulation.boxes[0]?.mqtt?.counters.badMessages ?? 0) >= 4);
});

for (const kind of ['sealed', 'signed', 'both'] as const satisfies readonly BoxKind[]) {
  test(`a box holding ${kind === 'both' ? 'K_park and issuer keys' : kind === 'sealed' ? 'K_park alone' : 'issuer keys alone'} passes every version 2 case; its issuer keys are as before`, async (t) => {
    const broker = await brokerForTest(t);
    const box = await boxFile(t, 4210 + ['sealed', 'signed', 'both'].indexOf(kind), keysOf(kind));
    const simulation = await simOnBroker(t, box, broker.url);
    const result = await conformance(box, broker.url);
    t.is(result.code, 0, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport;
    t.is(report.summary.total, reportRows(box.provisioning));
    t.deepEqual(failedNames(report), []);
    // Over the command line nothing can power-cycle the box: said, and skipped.
    t.deepEqual(report.results.filter((entry) => entry.result === 'skip').map(({ name, reason }) => ({ name, reason })), [SKIPPED_POWER_CYCLE]);
    const byName = new Map(report.results.map((entry) => [entry.name, entry]));
    t.regex(byName.get('REVOKE at the 65th live entry is REVOCATION_FULL (or the box says it holds more)')?.got ?? '', /^0x00 ×4, 0x32, full at live entry 65, 0x00$/);
    t.is(byName.has('a sealed ACCESS on a box without K_park'), kind === 'signed');
    t.is(byName.has('valid ACCESS opens; barrier OPENING then CLOSED'), kind !== 'signed');
    t.is(byName.get("SET_ISSUER puts the box's issuer keys back")?.result, 'pass');
    // A box that held none cannot be given none again: the next test.
    if (kind === 'sealed') return;
    const state = simulation.boxes[0]?.box.state;
    t.deepEqual(state?.issuerKey, box.provisioning.issuerKey, 'issuer_key as the file has it');
    t.deepEqual(state?.issuerKeyPrevious, box.provisioning.issuerKeyPrevious, 'issuer_key_previous as the file has it');
  });
}

test('a box that had no issuer key is left with one nobody can sign for (SET_ISSUER cannot set none)', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4215, keysOf('sealed'));
  const simulation = await simOnBroker(t, box, broker.url);
  const result = await conformance(box, broker.url, ['--skip-wearing']);
  t.is(result.code, 0, result.stdout + result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.regex(report.results.find((entry) => entry.name === "SET_ISSUER puts the box's issuer keys back")?.got ?? '', /^0x00, had none: now a key nobody can sign for$/);
  const state = simulation.boxes[0]?.box.state;
  t.is(state?.issuerKey?.length, 64);
  t.is(state?.issuerKeyPrevious, null);
});

test('--restore-issuer-key puts back the keys named, for a box re-keyed since its file', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4216, keysOf('signed'));
  const simulation = await simOnBroker(t, box, broker.url);
  const rekeyed = generateIssuerKeyPair().publicKey;
  const result = await conformance(box, broker.url, ['--skip-wearing', '--restore-issuer-key', rekeyed.toString('hex'), '--restore-issuer-key-previous', 'none']);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKey, rekeyed);
  t.is(simulation.boxes[0]?.box.state.issuerKeyPrevious, null);
});

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
  await waitFor(() => !Buffer.from(state()?.issuerKey ?? []).equals(box.provisioning.issuerKey ?? Buffer.alloc(0)), "the suite's issuers on the box", 30_000);
  t.is(await run.stop('SIGINT'), 130, run.stderr.join('\n'));
  t.deepEqual(state()?.issuerKey, box.provisioning.issuerKey);
  t.deepEqual(state()?.issuerKeyPrevious, box.provisioning.issuerKeyPrevious);
  const report = JSON.parse(run.stdout.join('\n')) as JsonReport;
  t.true(report.interrupted);
  t.true(report.summary.total < reportRows(box.provisioning));
  t.is(report.results.find((entry) => entry.name === "SET_ISSUER puts the box's issuer keys back")?.result, 'pass');
  t.regex(run.stderr.join('\n'), /interrupted; putting the box's issuer keys back/);
});

test('a box slower than --answer-ms fails the timing check, and only the checks that depend on time', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4202);
  await simOnBroker(t, box, broker.url, { settings: { faults: { delayMs: 150 } } });
  const result = await runCli(['conformance', '--box', box.path, '--mqtt', broker.url, '--answer-ms', '100', '--cycle-ms', '5000', '--json', '--skip-wearing']);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(failed.map((entry) => entry.name), ['every command answered within 100 ms']);
  t.regex(failed[0]?.reason ?? '', /valid ACCESS opens; barrier OPENING then CLOSED: \d{3} ms/);
});
