// The suite against a box that is not fresh, through the real command line
// and `parkbench sim` on a real pty pair: a box that starts after the
// suite (it waits for the first answer, --wait-ms) or never answers; a box
// that accepted the suite's control sequences before (a second run with the
// same --control-seq: the suite moves past its REPLAY); a box holding
// revocations the suite did not add (--held-revocations).
import avaTest, { type ExecutionContext } from 'ava';
import { createReadStream } from 'node:fs';
import { FrameKind, sealCommand, Status, parseResponse } from '../../firmware-protocol/index.js';
import { systemClock } from '../../lib/clock.js';
import { SerialBoxTarget } from '../../conformance/targets/serial-box-target.js';
import { startCli } from '../helpers/cli-process.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { runCli } from '../helpers/run-cli.js';
import { testNeeding } from '../helpers/requires.js';
import { boxFile, FAST_BARRIER_FLAGS, type BoxFile, type JsonReport } from '../helpers/conformance-fixtures.js';

const test = testNeeding('socat', avaTest);

function startSim(t: ExecutionContext, box: BoxFile, link: string) {
  return startCli(t, ['sim', '--box', box.path, '--serial', link, '--memory-state', ...FAST_BARRIER_FLAGS]);
}

function failures(report: JsonReport): string {
  return JSON.stringify(report.results.filter((entry) => entry.result === 'fail'));
}

/** Resolves with the first bytes written to the other end of the pair. */
function firstBytesAt(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path);
    stream.once('data', () => {
      stream.destroy();
      resolve();
    });
    stream.once('error', reject);
  });
}

test('a box that starts after the suite: the suite waits for its first answer (--wait-ms), then every case passes', async (t) => {
  const box = await boxFile(t, 4601);
  const pair = await ptyPairForTest(t);
  const asked = firstBytesAt(pair.a);
  const run = runCli([
    'conformance',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--skip-wearing',
    '--wait-ms',
    '60000',
    '--json',
  ]);
  // The suite has asked before the box is there.
  await asked;
  const sim = startSim(t, box, pair.a);
  await sim.waitForLine(/^parkbench sim ready /);
  const result = await run;
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.failed, 0, failures(report));
});

test('no box on the link: one line naming the wait and the remedy, exit 1', async (t) => {
  const box = await boxFile(t, 4602);
  const pair = await ptyPairForTest(t);
  const result = await runCli(['conformance', '--box', box.path, '--serial', pair.b, '--wait-ms', '1500']);
  t.is(result.code, 1, result.stderr);
  t.is(result.stdout, '');
  t.is(result.stderr, 'parkbench: no answer within 1500 ms: is the box running and on this link?\n');
});

test('a second run with the same --control-seq: the box answers REPLAY, the suite moves past its sequence and passes', async (t) => {
  const box = await boxFile(t, 4603);
  const pair = await ptyPairForTest(t);
  await startSim(t, box, pair.a).waitForLine(/^parkbench sim ready /);
  const args = [
    'conformance',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--skip-wearing',
    '--control-seq',
    '1000',
    '--json',
  ];
  for (const run of ['first', 'second']) {
    const result = await runCli(args);
    t.is(result.code, 0, `${run} run: ${result.stderr}`);
    const report = JSON.parse(result.stdout) as JsonReport;
    t.is(report.summary.failed, 0, `${run} run: ${failures(report)}`);
  }
});

test('a box holding 20 live revocations it was sent before: REVOCATION_FULL names --held-revocations; with --held-revocations 20 every case passes', async (t) => {
  const box = await boxFile(t, 4604);
  const pair = await ptyPairForTest(t);
  await startSim(t, box, pair.a).waitForLine(/^parkbench sim ready /);
  // The service's REVOKEs, as it seals them: key ids below 2^31, live for hours.
  const target = new SerialBoxTarget({
    target: { path: pair.b, baudRate: 115_200 },
    boxKey: box.provisioning.boxKey,
    clock: systemClock,
  });
  await target.open();
  const until = Math.floor(Date.now() / 1000) + 6 * 3600;
  for (const [sequence, count] of [
    [1, 16],
    [2, 4],
  ] as const) {
    const entries = Array.from({ length: count }, (_, index) => ({ keyId: 500 + sequence * 16 + index, until }));
    const frame = sealCommand({
      kind: FrameKind.REVOKE,
      key: box.provisioning.boxKey,
      keyId: sequence,
      scope: box.provisioning.moduleId,
      body: { entries },
    });
    const { response } = await target.exchange(frame, 5_000);
    t.is(response === null ? undefined : parseResponse(response).status, Status.OK);
  }
  await target.close();

  const args = ['conformance', '--box', box.path, '--serial', pair.b, '--json'];
  const told = await runCli([...args, '--held-revocations', '20']);
  const report = JSON.parse(told.stdout) as JsonReport;
  t.is(report.summary.failed, 0, failures(report));
  t.is(told.code, 0, told.stderr);
  t.regex(
    report.results.find((entry) => entry.name.startsWith('REVOKE at the 65th live entry'))?.got ?? '',
    /full at live entry 65\b/,
  );

  // Not told (and the told run's entries live for half a minute more): the failure names the flag.
  const unaware = await runCli(args);
  t.is(unaware.code, 1, unaware.stderr);
  const full = (JSON.parse(unaware.stdout) as JsonReport).results.find((entry) =>
    entry.name.startsWith('REVOKE at the 65th live entry'),
  );
  t.is(full?.result, 'fail');
  t.regex(full?.reason ?? '', /0 the box held before .*--held-revocations N/);
});
