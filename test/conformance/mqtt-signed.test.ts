// The version 2 cases through the real command line over MQTT: a box of a
// sealed parking, of a signed one and one holding both pass every case; the
// suite leaves the box's issuer keys as they were (the provisioning file's,
// or those named with --restore-issuer-key); a box that had none is left
// with one nobody can sign for.
import test from 'ava';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { brokerForTest } from '../helpers/broker.js';
import { boxFile, keysOf, reportRows, type BoxKind, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformance, failedNames, simOnBroker } from '../helpers/conformance-mqtt-sim.js';

const SKIPPED_POWER_CYCLE = {
  name: 'issuer keys, revocations, tries and the control sequence survive a power cycle',
  reason: 'the target cannot restart the box',
};

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
    t.deepEqual(
      report.results.filter((entry) => entry.result === 'skip').map(({ name, reason }) => ({ name, reason })),
      [SKIPPED_POWER_CYCLE],
    );
    const byName = new Map(report.results.map((entry) => [entry.name, entry]));
    t.regex(
      byName.get('REVOKE at the 65th live entry is REVOCATION_FULL (or the box says it holds more)')?.got ?? '',
      /^0x00 ×4, 0x32, full at live entry 65, 0x00$/,
    );
    t.is(byName.has('a sealed ACCESS on a box without K_park'), kind === 'signed');
    t.is(byName.has('valid ACCESS opens; barrier OPENING then CLOSED'), kind !== 'signed');
    // The window, scope, module list and tries by ACCESS_SIGNED: only where no sealed case checks them.
    t.is(byName.get('ACCESS_SIGNED not_after just outside the skew')?.result, kind === 'signed' ? 'pass' : undefined);
    t.is(byName.get('ACCESS_SIGNED a key with 2 tries, used 3 times')?.result, kind === 'signed' ? 'pass' : undefined);
    t.is(byName.get('a key with 2 tries, used 3 times')?.result, kind === 'signed' ? undefined : 'pass');
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
  t.regex(
    report.results.find((entry) => entry.name === "SET_ISSUER puts the box's issuer keys back")?.got ?? '',
    /^0x00, had none: now a key nobody can sign for$/,
  );
  const state = simulation.boxes[0]?.box.state;
  t.is(state?.issuerKey?.length, 64);
  t.is(state?.issuerKeyPrevious, null);
});

test('--restore-issuer-key puts back the keys named, for a box re-keyed since its file', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4216, keysOf('signed'));
  const simulation = await simOnBroker(t, box, broker.url);
  const rekeyed = generateIssuerKeyPair().publicKey;
  const result = await conformance(box, broker.url, [
    '--skip-wearing',
    '--restore-issuer-key',
    rekeyed.toString('hex'),
    '--restore-issuer-key-previous',
    'none',
  ]);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.deepEqual(simulation.boxes[0]?.box.state.issuerKey, rekeyed);
  t.is(simulation.boxes[0]?.box.state.issuerKeyPrevious, null);
});
