// A box's kept runs on the bench page, in Debian's chromium against a real
// `parkbench start`. The runs are made through the operator API's recording
// routes (POST /runs, its results, its end), as `parkbench conformance
// --record` makes them: the history lists them newest first with their
// verdicts and labels (a CI link only when it is http or https), a page at
// a time; a run recorded while the page is open appears and counts its
// cases as they are posted; two runs compared show the regression first;
// a case's time across runs is plotted with its failure marked. No request
// fails and nothing reaches the console in any of them.
import test, { type ExecutionContext } from 'ava';
import type { Locator, Page } from 'playwright-core';
import { benchAndBrowserForFile } from '../helpers/bench-and-browser.js';
import type { BenchProcess } from '../helpers/bench-process.js';
import { openPage } from '../helpers/browser.js';
import { operatorOk } from '../helpers/operator-call.js';
import { testNeeding } from '../helpers/requires.js';

const browserTest = testNeeding('chromium', test.serial);

const HOSTILE = '<img src=x onerror=alert(document.domain)>';

const running = benchAndBrowserForFile(test);

interface Run {
  id: string;
  state: string;
  started_at: string;
}

interface Case {
  name: string;
  result: 'pass' | 'fail' | 'skip';
  ms: number;
  reason?: string | null;
}

function moduleId(bench: BenchProcess, index: number): number {
  const box = bench.ready.boxes[index];
  if (box === undefined) throw new Error(`the demo has no box ${index}`);
  return box.module_id;
}

/** A run recorded as the command line records one: started, its cases, then ended (unless `end` is null). */
async function recordRun(
  bench: BenchProcess,
  options: {
    module: number;
    source?: 'cli' | 'ci';
    labels?: Record<string, string>;
    startedAt?: string;
    cases: Case[];
    end: { state: 'passed' | 'failed' | 'error'; error?: string } | null;
  },
): Promise<Run> {
  const call = { token: bench.token };
  const run = await operatorOk<Run>(
    bench.apiUrl,
    '/runs',
    {
      ...call,
      body: {
        module_id: options.module,
        kind: 'conformance',
        source: options.source ?? 'cli',
        target: 'mqtt',
        labels: options.labels ?? {},
        ...(options.startedAt === undefined ? {} : { started_at: options.startedAt }),
      },
    },
    201,
  );
  if (options.cases.length > 0)
    await operatorOk(bench.apiUrl, `/runs/${run.id}/results`, { ...call, body: { results: options.cases } });
  if (options.end === null) return run;
  return operatorOk<Run>(bench.apiUrl, `/runs/${run.id}/end`, {
    ...call,
    body: { ...options.end, summary: summaryOf(options.cases) },
  });
}

/** The summary the command line sends with a run's end. */
function summaryOf(cases: readonly Case[]): Record<string, number | boolean> {
  const counted = (result: Case['result']) => cases.filter((c) => c.result === result).length;
  return {
    total: cases.length,
    passed: counted('pass'),
    failed: counted('fail'),
    skipped: counted('skip'),
    ms: cases.reduce((sum, c) => sum + c.ms, 0),
    interrupted: false,
  };
}

/** `minutes` ago, as an ISO time. */
function minutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString();
}

interface Watched {
  page: Page;
  /** Requests that failed or answered 400 and above, and console and page errors. */
  problems: () => string[];
}

/** The page logged in and live, with the runs of box `module` open. */
async function runsOf(t: ExecutionContext, module: number): Promise<Watched> {
  const { bench, browser } = running();
  const opened = await openPage(browser);
  t.teardown(() => opened.context.close());
  await opened.page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
  await opened.page.locator('[data-connection="live"]').waitFor();
  await opened.page.locator(`[data-module-id="${module}"] [data-action="runs"]`).click();
  await opened.page.locator(`[data-runs="${module}"]`).waitFor();
  return {
    page: opened.page,
    problems: () => [...opened.failedRequests, ...opened.consoleErrors, ...opened.pageErrors, ...opened.dialogs],
  };
}

/** Two attributes of each element `rows` finds, in order (this file has no DOM types to evaluate with). */
async function pairs(rows: Locator, first: string, second: string, limit = Infinity): Promise<(string | null)[][]> {
  const found: (string | null)[][] = [];
  const count = Math.min(await rows.count(), limit);
  for (let index = 0; index < count; index += 1)
    found.push([await rows.nth(index).getAttribute(first), await rows.nth(index).getAttribute(second)]);
  return found;
}

const pass = (name: string, ms = 10): Case => ({ name, result: 'pass', ms });
const fail = (name: string, ms = 10, reason = 'expected OK, got BARRIER_FAULT'): Case => ({
  name,
  result: 'fail',
  ms,
  reason,
});

browserTest(
  "a box's history: newest first with verdict, kind, source, who, labels (only an http(s) label a link), when and how long; More pages on",
  async (t) => {
    t.timeout(120_000);
    const { bench } = running();
    const box = moduleId(bench, 1);
    // 18 older runs, so the three below and the first 17 of these fill the first page (20).
    for (let index = 0; index < 18; index += 1)
      await recordRun(bench, {
        module: box,
        startedAt: minutesAgo(300 - index),
        cases: [pass('status')],
        end: { state: 'passed' },
      });
    const passed = await recordRun(bench, {
      module: box,
      labels: { firmware: '1.2.0', hardware: 'rev-b', ci_job_url: 'https://ci.example.com/job/123' },
      startedAt: minutesAgo(30),
      cases: [pass('status'), pass('access')],
      end: { state: 'passed' },
    });
    const failed = await recordRun(bench, {
      module: box,
      source: 'ci',
      labels: { firmware: HOSTILE, ci_job_url: 'javascript:alert(1)' },
      startedAt: minutesAgo(20),
      cases: [pass('status'), fail('access')],
      end: { state: 'failed' },
    });
    const errored = await recordRun(bench, {
      module: box,
      startedAt: minutesAgo(10),
      cases: [],
      end: { state: 'error', error: 'the box went away' },
    });

    const { page, problems } = await runsOf(t, box);
    const rows = page.locator(`[data-runs="${box}"] [data-run-id]`);
    await page.locator(`[data-runs="${box}"] [data-action="runs-more"]`).waitFor();
    t.is(await rows.count(), 20);
    t.deepEqual(await pairs(rows, 'data-run-id', 'data-state', 3), [
      [errored.id, 'error'],
      [failed.id, 'failed'],
      [passed.id, 'passed'],
    ]);

    const first = page.locator(`[data-run-id="${passed.id}"]`);
    t.is(await first.getAttribute('data-kind'), 'conformance');
    t.is(await first.getAttribute('data-source'), 'cli');
    const text = await first.innerText();
    t.regex(text, /by page-test/);
    t.regex(text, /30 min ago/);
    t.regex(text, /firmware:\s*1\.2\.0/);
    t.regex(text, /hardware:\s*rev-b/);
    t.regex(text, /2 cases, 2 passed/);
    t.is(await first.locator('a').getAttribute('href'), 'https://ci.example.com/job/123');
    t.is(await first.locator('a').getAttribute('rel'), 'noopener noreferrer');
    t.truthy(await first.locator('time').getAttribute('title'), 'the absolute time on hover');

    const hostile = page.locator(`[data-run-id="${failed.id}"]`);
    t.is(await hostile.getAttribute('data-source'), 'ci');
    t.is(await hostile.locator('a').count(), 0, 'a javascript: label is no link');
    t.regex(await hostile.innerText(), /javascript:alert\(1\)/);
    t.true((await hostile.innerText()).includes(HOSTILE), 'the label shown as text');
    t.is(await hostile.locator('img').count(), 0);
    t.regex(await hostile.innerText(), /2 cases, 1 passed, 1 failed/);
    t.regex(await page.locator(`[data-run-id="${errored.id}"] [data-run-error]`).innerText(), /the box went away/);

    await page.locator(`[data-runs="${box}"] [data-action="runs-more"]`).click();
    await rows.nth(20).waitFor();
    t.is(await rows.count(), 21);
    t.is(await page.locator(`[data-runs="${box}"] [data-action="runs-more"]`).count(), 0, 'no page after the last');
    t.deepEqual(problems(), []);
  },
);

browserTest(
  'a run recorded while the page is open appears without a reload and counts its cases as they are posted',
  async (t) => {
    t.timeout(120_000);
    const { bench } = running();
    const box = moduleId(bench, 0);
    const { page, problems } = await runsOf(t, box);
    await page.locator(`[data-runs="${box}"] [data-run-id], [data-runs="${box}"] .empty`).first().waitFor();

    const run = await recordRun(bench, { module: box, labels: { firmware: 'live-1' }, cases: [], end: null });
    const row = page.locator(`[data-run-id="${run.id}"]`);
    await row.locator('[data-verdict]').waitFor();
    t.is(await row.getAttribute('data-state'), 'running');
    for (const [index, name] of ['status', 'access', 'battery'].entries()) {
      await operatorOk(bench.apiUrl, `/runs/${run.id}/results`, {
        token: bench.token,
        body: { results: [pass(name)] },
      });
      await row.locator(`[data-run-cases="${index + 1}"]`).waitFor({ timeout: 5_000 });
    }
    await operatorOk(bench.apiUrl, `/runs/${run.id}/end`, {
      token: bench.token,
      body: { state: 'passed', summary: summaryOf(['status', 'access', 'battery'].map((name) => pass(name))) },
    });
    await page.locator(`[data-run-id="${run.id}"][data-state="passed"]`).waitFor({ timeout: 5_000 });
    t.regex(await row.innerText(), /3 cases, 3 passed/);
    t.deepEqual(problems(), []);
  },
);

browserTest(
  'two runs compared: the regression first, then fixed, new, gone, same; the counts and the case whose time moved',
  async (t) => {
    t.timeout(120_000);
    const { bench } = running();
    const box = moduleId(bench, 0);
    const before = await recordRun(bench, {
      module: box,
      labels: { firmware: '2.0.0' },
      startedAt: minutesAgo(120),
      cases: [pass('cmp-status', 10), pass('cmp-access', 20), pass('cmp-gone', 10), fail('cmp-fixed', 10)],
      end: { state: 'failed' },
    });
    const after = await recordRun(bench, {
      module: box,
      labels: { firmware: '2.1.0' },
      startedAt: minutesAgo(110),
      cases: [pass('cmp-status', 10), fail('cmp-access', 200), pass('cmp-fixed', 10), pass('cmp-new', 5)],
      end: { state: 'failed' },
    });
    const { page, problems } = await runsOf(t, box);
    await page.locator(`[data-run-id="${before.id}"] [data-action="pick-a"]`).click();
    await page.locator(`[data-run-id="${after.id}"] [data-action="pick-b"]`).click();
    await page.locator(`[data-runs="${box}"] [data-action="compare"]`).click();
    const compare = page.locator(`[data-compare][data-a="${before.id}"][data-b="${after.id}"]`);
    await compare.locator('[data-counts]').waitFor();

    const cases = await pairs(compare.locator('[data-compare-case]'), 'data-compare-case', 'data-change');
    t.deepEqual(cases, [
      ['cmp-access', 'regressed'],
      ['cmp-fixed', 'fixed'],
      ['cmp-new', 'new'],
      ['cmp-gone', 'gone'],
      ['cmp-status', 'same'],
    ]);
    const counts = compare.locator('[data-counts]');
    for (const [change, count] of Object.entries({ regressed: 1, fixed: 1, new: 1, gone: 1, same: 1 }))
      t.is(await counts.getAttribute(`data-${change}`), String(count), change);
    const regressed = await compare.locator('[data-compare-case="cmp-access"]').innerText();
    t.regex(regressed, /expected OK, got BARRIER_FAULT/, "b's reason");
    t.regex(regressed, /\+180/, 'the ms delta');
    await compare.locator('[data-figure="ms:cmp-access"]').waitFor();
    t.deepEqual(problems(), []);
  },
);

browserTest("a case's time across the box's runs: one point per run, its failure marked", async (t) => {
  t.timeout(120_000);
  const { bench } = running();
  const box = moduleId(bench, 0);
  const times = [40, 45, 300, 42];
  for (const [index, ms] of times.entries())
    await recordRun(bench, {
      module: box,
      startedAt: minutesAgo(100 - index),
      cases: [pass('status', 5), ms === 300 ? fail('trend-access', ms) : pass('trend-access', ms)],
      end: { state: ms === 300 ? 'failed' : 'passed' },
    });
  const { page, problems } = await runsOf(t, box);
  await page.locator(`[data-runs="${box}"] [data-run-id]`).first().waitFor();
  await page.locator(`[data-runs="${box}"] [data-action="trend"]`).click();
  const select = page.locator('[data-trend-select]');
  await select.waitFor();
  await select.selectOption('trend-access');
  const chart = page.locator('[data-trend="trend-access"]');
  await chart.waitFor();
  t.is(await chart.getAttribute('data-points'), '4');
  t.is(await chart.getAttribute('data-failures'), '1');
  t.is(await chart.locator('canvas').count(), 1, 'drawn by uPlot');
  t.deepEqual(problems(), []);
});

browserTest(
  'a conformance run started from the page: kept with source page, in the history as it runs and when it ends, beside the Conformance panel',
  async (t) => {
    t.timeout(180_000);
    const { bench } = running();
    const box = moduleId(bench, 1);
    const { page, problems } = await runsOf(t, box);
    await page.locator(`[data-runs="${box}"] [data-run-id]`).first().waitFor();
    await page.locator(`[data-module-id="${box}"] [data-action="conformance"]`).click();
    const panel = page.locator('[data-conformance-run]');
    await panel.waitFor({ timeout: 10_000 });
    const runId = (await panel.getAttribute('data-conformance-run')) ?? '';
    const row = page.locator(`[data-runs="${box}"] [data-run-id="${runId}"][data-source="page"]`);
    await row.waitFor({ timeout: 10_000 });
    await page.locator(`[data-conformance-run="${runId}"]:not([data-state="running"])`).waitFor({ timeout: 120_000 });
    const verdict = (await page.locator(`[data-conformance-run="${runId}"]`).getAttribute('data-state')) ?? '';
    t.not(verdict, 'error', 'the demo box passes or fails the suite');
    await page.locator(`[data-run-id="${runId}"][data-state="${verdict}"]`).waitFor({ timeout: 5_000 });
    const cases = await page.locator(`[data-conformance-run="${runId}"] [data-case]`).count();
    t.is(await row.locator(`[data-run-cases="${cases}"]`).count(), 1, 'as many cases as the Conformance panel');
    t.deepEqual(problems(), []);
  },
);
