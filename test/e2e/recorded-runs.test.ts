// Runs recorded from the command line, end to end with real parts: a real
// `parkbench start` (API, broker, page), `parkbench sim` on one end of a
// socat pty pair with a box the service knows, `parkbench conformance
// --record` on the other end, and the bench page in Debian's chromium.
// - The run shows on the page while it runs (its cases counting up), ends
//   passed, and is still there after the service is stopped and started
//   again on the same database.
// - A second run against the same box started with a firmware bug ends
//   failed, and comparing the two runs names as regressed exactly the cases
//   the bug run failed, nothing fixed, nothing new or gone.
import { join } from 'node:path';
import avaTest, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { startBenchProcess, type BenchProcess } from '../helpers/bench-process.js';
import { launchBrowser, openPage } from '../helpers/browser.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { simServing } from '../helpers/conformance-serial-sim.js';
import { operatorOk } from '../helpers/operator-call.js';
import { NO_CI } from '../helpers/operator-service.js';
import { testNeeding } from '../helpers/requires.js';
import { waitFor } from '../helpers/wait.js';

const test = testNeeding(['chromium', 'socat'], avaTest.serial);

const MODULE_ID = 9451;

interface RunView {
  id: string;
  state: string;
  source: string;
  labels: Record<string, string>;
  results?: { name: string; result: string }[];
}

interface Comparison {
  cases: { name: string; change: string }[];
  counts: Record<'regressed' | 'fixed' | 'same' | 'new' | 'gone', number>;
}

/** A parking (signed, `parking create`'s default) with box MODULE_ID, and its provisioning file as `admin box provision` writes it. */
async function seedBox(bench: BenchProcess, dir: string): Promise<string> {
  const ok = async (...args: string[]): Promise<Record<string, unknown>> => {
    const result = await bench.admin(...args, '--json');
    if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const parking = await ok(
    'parking',
    'create',
    '--name',
    'Recorded runs',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.00',
    '--max-duration-minutes',
    '120',
  );
  await ok(
    'box',
    'add',
    '--parking',
    String(parking.id),
    '--module-id',
    String(MODULE_ID),
    '--mac',
    '02:50:42:00:24:EB',
    '--direction',
    'entrance',
  );
  const file = join(dir, `box-${MODULE_ID}.json`);
  const provisioned = await bench.admin('box', 'provision', '--module-id', String(MODULE_ID), '--out', file);
  if (provisioned.code !== 0) throw new Error(provisioned.stderr);
  return file;
}

/** `parkbench conformance --record` against the box on `serial`, recording into the bench. */
function recordedRun(
  t: ExecutionContext,
  bench: BenchProcess,
  box: string,
  serial: string,
  firmware: string,
): CliProcess {
  return startCli(
    t,
    [
      'conformance',
      '--box',
      box,
      '--serial',
      serial,
      '--cycle-ms',
      '5000',
      '--json',
      '--record',
      '--label',
      `firmware=${firmware}`,
    ],
    { ...NO_CI, PARKBENCH_URL: bench.apiUrl, PARKBENCH_OPERATOR_TOKEN: bench.token },
  );
}

/** The run's JSON report, once the command has ended with `code`. */
async function reportOf(
  t: ExecutionContext,
  run: CliProcess,
  code: number,
): Promise<{ record: { run_id: string }; results: { name: string; result: string }[] }> {
  t.is(await run.exited, code, run.stderr.join('\n'));
  return JSON.parse(run.stdout.join('\n')) as {
    record: { run_id: string };
    results: { name: string; result: string }[];
  };
}

/** The page logged in, live, with the box's runs open. */
async function runsPanel(page: Page, bench: BenchProcess): Promise<void> {
  await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
  await page.locator('[data-connection="live"]').waitFor();
  await page.locator(`[data-module-id="${MODULE_ID}"] [data-action="runs"]`).click();
  await page.locator(`[data-runs="${MODULE_ID}"]`).waitFor();
}

test('a command-line run with --record shows on the page as it runs and after a restart; a firmware bug regresses exactly its cases', async (t) => {
  t.timeout(300_000);
  const dataDir = tempDir(t);
  const port = await freePort();
  let bench = await startBenchProcess({ dataDir, port });
  t.teardown(() => bench.stop());
  const box = await seedBox(bench, tempDir(t));
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const before = await openPage(browser);

  // A healthy box, its run watched on the page while it runs.
  await runsPanel(before.page, bench);
  const healthy = recordedRun(t, bench, box, (await simServing(t, box)).pair.b, '1.4.2');
  const running = before.page.locator(`[data-runs="${MODULE_ID}"] [data-run-id][data-state="running"]`);
  await running.waitFor({ timeout: 60_000 });
  await waitFor(
    async () => /[1-9]\d* cases?/.test(await running.innerText()),
    'cases counted on the page while it runs',
    60_000,
  );
  const healthyReport = await reportOf(t, healthy, 0);
  const healthyId = healthyReport.record.run_id;
  await before.page.locator(`[data-run-id="${healthyId}"][data-state="passed"]`).waitFor();
  t.deepEqual([...before.consoleErrors, ...before.pageErrors, ...before.failedRequests], []);
  await before.context.close();

  // The service stopped and started again on the same database: the run is still there.
  const { token } = bench;
  await bench.stop();
  bench = await startBenchProcess({ dataDir, port, token });
  const after = await openPage(browser);
  const { page } = after;
  await runsPanel(page, bench);
  const kept = page.locator(`[data-run-id="${healthyId}"]`);
  await kept.waitFor();
  t.is(await kept.getAttribute('data-state'), 'passed');
  t.is(await kept.getAttribute('data-source'), 'cli');
  t.regex(await kept.innerText(), /firmware:\s*1\.4\.2/);

  // The same box with a firmware bug: failed, and the comparison names exactly its failed cases.
  const buggy = recordedRun(t, bench, box, (await simServing(t, box, ['--bug', 'accept-expired'])).pair.b, '1.4.3-rc1');
  const buggyReport = await reportOf(t, buggy, 1);
  const failed = buggyReport.results.filter((entry) => entry.result === 'fail').map((entry) => entry.name);
  // The box is of a signed parking (`parking create`'s default): its window is checked by ACCESS_SIGNED.
  t.deepEqual(failed, ['ACCESS_SIGNED not_after just outside the skew']);
  const stored = await operatorOk<RunView>(bench.apiUrl, `/runs/${buggyReport.record.run_id}`, { token });
  t.like(stored, { state: 'failed', source: 'cli', labels: { firmware: '1.4.3-rc1' } });
  const comparison = await operatorOk<Comparison>(
    bench.apiUrl,
    `/runs/compare?a=${healthyId}&b=${buggyReport.record.run_id}`,
    { token },
  );
  t.deepEqual(
    comparison.cases.filter((entry) => entry.change === 'regressed').map((entry) => entry.name),
    failed,
  );
  t.like(comparison.counts, { regressed: failed.length, fixed: 0, new: 0, gone: 0 });
  t.is(comparison.cases[0]?.change, 'regressed', 'regressions first');
  await page.locator(`[data-run-id="${buggyReport.record.run_id}"][data-state="failed"]`).waitFor();
  t.deepEqual([...after.consoleErrors, ...after.pageErrors, ...after.failedRequests], []);
});
