// A capture that cannot be written to the end never stops the run: the
// suite's process is held to a few KiB of file (RLIMIT_FSIZE, bash's
// `ulimit -f`; Node ignores SIGXFSZ), so a write of --capture fails with
// EFBIG partway through the run. The capture stops with one log line, the
// run goes on to its report, and every block written before reads.
import test from 'ava';
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { brokerForTest } from '../helpers/broker.js';
import { capturedRecords } from '../helpers/conformance-capture.js';
import { boxFile, type JsonReport } from '../helpers/conformance-fixtures.js';
import { simOnBroker } from '../helpers/conformance-mqtt-sim.js';
import { builtBin } from '../helpers/run-cli.js';

const LIMIT_KIB = 8;

test('a write error stops the capture with one log line; the run goes on and passes', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4275);
  await simOnBroker(t, box, broker.url);
  const capture = join(box.directory, 'run.pcapng');
  const args = ['conformance', '--box', box.path, '--mqtt', broker.url, '--cycle-ms', '5000', '--json'];
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      [
        '-c',
        `ulimit -f ${LIMIT_KIB} && exec "$@"`,
        'bash',
        process.execPath,
        builtBin(),
        ...args,
        '--capture',
        capture,
      ],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
      },
    );
  });
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.failed, 0);
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  t.is(lines.length, 1, result.stderr);
  t.regex(lines[0] ?? '', /capture to .*run\.pcapng stopped: .*EFBIG/);
  t.true(statSync(capture).size <= LIMIT_KIB * 1024);
  t.true(capturedRecords(capture).records.length > 0);
});
