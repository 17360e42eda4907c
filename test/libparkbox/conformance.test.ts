// libparkbox (the box side in C99, libparkbox/README.md) run as a box by
// parkbox-host on one end of a real pty pair, and the conformance suite
// through the real command line on the other: a box of a sealed parking and
// one of a signed parking pass every case, the power cycle skipped (no
// command-line target can restart a box). parkbox-host is built with CMake
// into libparkbox/build (git-ignored; an up-to-date build costs a second).
//
// Needs socat (testNeeding: a skip naming the package, a failure under CI),
// and cmake, a C compiler and mbed TLS's headers (libmbedtls-dev): without
// those the tests are skipped with one line saying what to install, under
// CI too, since the CI image does not install a C toolchain.
import avaTest, { type ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { boxFile, keysOf, reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { onPath, testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const source = join(root, 'libparkbox');
const build = join(source, 'build');
const host = join(build, 'parkbox-host');

/** What building parkbox-host needs and is missing, as one line; undefined when nothing is. */
function missingToolchain(): string | undefined {
  if (!onPath('cmake')) return 'cmake is not on PATH: apt-get install cmake';
  if (!onPath('cc')) return 'no C compiler (cc) on PATH: apt-get install gcc';
  if (!existsSync('/usr/include/mbedtls/ecdsa.h'))
    return 'mbed TLS headers are not installed: apt-get install libmbedtls-dev';
  return undefined;
}

const socatTest = testNeeding('socat', avaTest.serial);
const missing = missingToolchain();
if (missing !== undefined) process.stderr.write(`skipping the libparkbox tests: ${missing}\n`);
const test =
  missing === undefined
    ? socatTest
    : (title: string, implementation: (t: ExecutionContext) => Promise<void>) =>
        avaTest.skip(`${title} [skipped: ${missing}]`, implementation);

let built: Promise<void> | undefined;

/** Configures (once) and builds parkbox-host with the repository's CMake build. */
function buildHost(): Promise<void> {
  built ??= (async () => {
    await run('cmake', ['-S', source, '-B', build], { cwd: root, timeout: 120_000 });
    await run('cmake', ['--build', build, '--target', 'parkbox-host'], { cwd: root, timeout: 170_000 });
  })();
  return built;
}

/** Starts parkbox-host on `serial` with its state in `directory`; stopped when the test ends. */
async function startHost(t: ExecutionContext, box: string, serial: string, directory: string): Promise<void> {
  const child = spawn(
    host,
    ['--box', box, '--serial', serial, '--state', join(directory, 'box.state'), '--barrier-ms', '200'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stderr: string[] = [];
  const exited = new Promise<number | string>((done) =>
    child.once('exit', (code, signal) => done(code ?? signal ?? 'unknown')),
  );
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  t.teardown(async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    t.log(`parkbox-host exited ${String(await exited)}; stderr:\n${stderr.join('\n')}`);
  });
  // Its first line says it is on the link (after its start-up status report).
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`parkbox-host did not start: ${stderr.join('\n')}`)), 10_000);
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      if (line.startsWith('parkbox-host: box ')) {
        clearTimeout(timer);
        ready();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`parkbox-host exited ${String(code)}: ${stderr.join('\n')}`));
    });
  });
}

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';

for (const kind of ['sealed', 'signed'] as const) {
  test(`libparkbox's parkbox-host, a box of a ${kind} parking on a pty, passes every case but the power cycle`, async (t) => {
    await buildHost();
    const box = await boxFile(t, kind === 'sealed' ? 5101 : 5102, keysOf(kind));
    const pair = await ptyPairForTest(t);
    await startHost(t, box.path, pair.a, box.directory);
    const result = await runCli(['conformance', '--box', box.path, '--serial', pair.b, '--cycle-ms', '5000', '--json']);
    const report = JSON.parse(result.stdout) as JsonReport;
    const failed = report.results.filter((entry) => entry.result === 'fail');
    t.is(failed.length, 0, JSON.stringify(failed, null, 2));
    t.is(result.code, 0, result.stderr);
    t.is(report.summary.total, reportRows(box.provisioning));
    t.deepEqual(
      report.results.filter((entry) => entry.result === 'skip').map((entry) => entry.name),
      [POWER_CYCLE],
    );
  });
}
