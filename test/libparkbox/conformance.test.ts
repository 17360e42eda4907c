// libparkbox (the box side in C99, libparkbox/README.md) run as a box by
// parkbox-host on one end of a real pty pair, and the conformance suite
// through the real command line on the other: a box of a sealed parking and
// one of a signed parking pass every case, the power cycle skipped (a bare
// --serial target cannot restart a box; power-cycle.test.ts gives it a
// power switch); and the suite in process on a
// serial target whose restart kills parkbox-host and starts it again on its
// state file, where the power cycle passes too. parkbox-host is built and
// started by test/helpers/parkbox-host.ts.
//
// Needs socat, cmake, a C compiler and mbed TLS's headers (libmbedtls-dev),
// through testNeeding: without one, a skip naming the package; under CI
// (which installs them all), a failure.
import avaTest from 'ava';
import { join } from 'node:path';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { runSuite } from '../../conformance/run-suite.js';
import { SerialBoxTarget } from '../../conformance/targets/serial-box-target.js';
import { boxFile, keysOf, reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { buildParkboxHost, startParkboxHost, type HostProcess } from '../helpers/parkbox-host.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { testNeeding } from '../helpers/requires.js';
import { restartableTarget } from '../helpers/restartable-target.js';
import { conformanceOnSerial } from '../helpers/conformance-serial-sim.js';

const test = testNeeding(['socat', 'cmake', 'cc', 'mbedtls'], avaTest.serial);

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';

for (const kind of ['sealed', 'signed'] as const) {
  test(`libparkbox's parkbox-host, a box of a ${kind} parking on a pty, passes every case but the power cycle`, async (t) => {
    await buildParkboxHost();
    const box = await boxFile(t, kind === 'sealed' ? 5101 : 5102, keysOf(kind));
    const pair = await ptyPairForTest(t);
    await startParkboxHost(t, box.path, pair.a, join(box.directory, 'box.state'));
    const result = await conformanceOnSerial(box, pair.b);
    const report = JSON.parse(result.stdout) as JsonReport;
    const failed = report.results.filter((entry) => entry.result === 'fail');
    t.is(failed.length, 0, JSON.stringify(failed, null, 2));
    t.is(result.code, 0, result.stderr);
    t.is(report.summary.total, reportRows(box.provisioning));
    t.deepEqual(
      report.results.filter((entry) => entry.result === 'skip').map((entry) => entry.name),
      [POWER_CYCLE],
    );
    // The key run out of tries (step 9): sealed with K_park, by ACCESS_SIGNED without.
    const tries = `${kind === 'signed' ? 'ACCESS_SIGNED ' : ''}a key with 2 tries, used 3 times`;
    t.like(
      report.results.find((entry) => entry.name === tries),
      { result: 'pass', got: '0x00, 0x00, 0x12' },
      tries,
    );
  });
}

test('a power cut of parkbox-host (SIGKILL, started again on its state file) loses nothing: the power-cycle case passes too', async (t) => {
  await buildParkboxHost();
  const box = await boxFile(t, 5103, keysOf('both'));
  const pair = await ptyPairForTest(t);
  const start = (): Promise<HostProcess> => startParkboxHost(t, box.path, pair.a, join(box.directory, 'box.state'));
  const serial = new SerialBoxTarget({
    target: { path: pair.b, baudRate: 115_200 },
    boxKey: box.provisioning.boxKey,
    clock: systemClock,
  });
  // The power cut: parkbox-host killed (SIGKILL), then started again on the same state file and pty.
  let host = await start();
  const target = restartableTarget(serial, async () => {
    await host.stop('SIGKILL');
    host = await start();
  });
  await target.open();
  t.teardown(() => target.close());
  const report = await runSuite({
    box: boxUnderTest(box.provisioning),
    target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 5_000, controlSeq: 1_000, keyIdBase: 0x8000_0000 },
  });
  t.deepEqual(
    report.results.filter((entry) => entry.result !== 'pass'),
    [],
  );
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(target.restarts, 1);
  t.is(report.results.find((entry) => entry.name === POWER_CYCLE)?.got, '0x00, 0x00, restart, 0x00, 0x16, 0x00, 0x15');
});
