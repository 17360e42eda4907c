// report.html in Chromium: from a real run against a simulated box (a jam
// every 25 openings, so failures are listed), the page renders with its
// verdicts on top, its three plots have data, the failures are listed, and
// nothing is fetched or logged as an error. Then a page of 100,000 cycles:
// under 5 MB, and it opens (the time is logged; perf:soak measures it).
import avaTest, { type ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { CycleLog } from '../../soak/cycle-log.js';
import { parseLimits } from '../../soak/limits.js';
import { renderSoakHtml } from '../../soak/reports/html.js';
import { buildSoakReport, runSoak } from '../../soak/run-soak.js';
import { launchBrowser, openPage } from '../helpers/browser.js';
import { testNeeding } from '../helpers/requires.js';
import { soakSim } from './soak-sim.js';

const test = testNeeding(['chromium', 'socat'], avaTest.serial);

let browser: Browser | undefined;
avaTest.after.always(async () => {
  await browser?.close();
});

async function showPage(t: ExecutionContext, html: string) {
  const folder = await mkdtemp(join(tmpdir(), 'pb-soak-page-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  const file = join(folder, 'report.html');
  await writeFile(file, html);
  browser ??= await launchBrowser();
  const opened = await openPage(browser);
  t.teardown(() => opened.context.close());
  const requests: string[] = [];
  opened.page.on('request', (request) => requests.push(request.url()));
  const started = performance.now();
  await opened.page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  const loadMs = performance.now() - started;
  return { ...opened, requests, loadMs, url: pathToFileURL(file).href };
}

const LIMITS = parseLimits(['failures<=4', 'answer_ms.p99<=250', 'battery_mv.min>=3300']);

test('the page of a real run: verdicts on top, three plots with data, the failures listed, no request, no error', async (t) => {
  const sim = await soakSim(t, 5301, { settings: { batteryMv: 12_000 }, endurance: { jamEvery: 25 } });
  const report = await runSoak({
    box: boxUnderTest(sim.box.provisioning),
    target: sim.target,
    clock: systemClock,
    settings: { answerMs: 2_000, cycleMs: 2_000, controlSeq: 1_000, keyIdBase: 0x8000_0000, firstAnswerMs: 10_000 },
    stop: { cycles: 100 },
    limits: LIMITS,
  });
  t.is(report.log.failures.length, 4);
  const { page, requests, consoleErrors, pageErrors, url } = await showPage(t, renderSoakHtml(report));
  t.deepEqual(requests, [url]);
  t.deepEqual(consoleErrors, []);
  t.deepEqual(pageErrors, []);
  t.is(await page.getAttribute('h1', 'data-result'), 'pass');
  t.is(await page.locator('#verdicts tr[data-verdict="pass"]').count(), 3);
  t.is(await page.locator('#verdicts tr[data-verdict="fail"]').count(), 0);
  // The verdicts come before the plots.
  const order = await page.evaluate(
    "document.querySelector('#verdicts').compareDocumentPosition(document.querySelector('svg')) & Node.DOCUMENT_POSITION_FOLLOWING",
  );
  t.truthy(order);
  for (const plot of ['answer', 'answer-histogram', 'battery']) {
    const svg = page.locator(`svg[data-plot="${plot}"]`);
    t.true(Number(await svg.getAttribute('data-points')) > 0, plot);
    const box = await svg.boundingBox();
    t.true((box?.width ?? 0) > 500 && (box?.height ?? 0) > 100, plot);
  }
  t.true(((await page.locator('svg[data-plot="answer"] path.series').getAttribute('d')) ?? '').length > 100);
  t.true((await page.locator('svg[data-plot="answer-histogram"] rect[fill="#1f6feb"]').count()) > 0);
  // The answer limit is drawn on the plot and the histogram.
  t.is(await page.locator('svg[data-plot="answer"] line.limit').count(), 1);
  t.is(await page.locator('svg[data-plot="answer-histogram"] line.limit').count(), 1);
  t.is(await page.locator('svg[data-plot="battery"] line.limit').count(), 1);
  const failures = await page.locator('#failures tr td:first-child').allTextContents();
  t.deepEqual(failures, ['25', '50', '75', '100']);
  t.regex((await page.locator('#failures').textContent()) ?? '', /0x30 BARRIER_FAULT/);
});

test('a page of 100,000 cycles is under 5 MB and opens with its plots drawn', async (t) => {
  const log = new CycleLog();
  const started = Date.UTC(2026, 0, 1);
  for (let index = 0; index < 100_000; index++) {
    const failed = index % 5_000 === 4_999;
    log.push({
      at: started + index * 7,
      status: failed ? 0x30 : 0,
      answer_ms: 2 + (index % 97) / 10 + (index % 1_000 === 0 ? 40 : 0),
      open_ms: failed ? null : 3,
      cycle_ms: failed ? null : 5,
      battery_mv: 12_000 - Math.floor(index / 50),
      drift_s: -0.5,
      ...(failed ? { failure: 'status 0x30 BARRIER_FAULT' } : {}),
    });
  }
  const report = buildSoakReport({
    target: 'serial',
    moduleId: 5302,
    access: 'sealed',
    log,
    powerCycles: [],
    limits: LIMITS,
    interrupted: false,
    startedAt: started,
    ms: 700_000,
  });
  const html = renderSoakHtml(report);
  const bytes = Buffer.byteLength(html);
  t.true(bytes < 5 * 1024 * 1024, `${bytes} bytes`);
  const { page, consoleErrors, loadMs } = await showPage(t, html);
  t.deepEqual(consoleErrors, []);
  t.is(
    await page.getAttribute('svg[data-plot="answer"]', 'data-points'),
    String(page.viewportSize()?.width === undefined ? 0 : 820),
  );
  t.is(await page.locator('#failures tr td:first-child').count(), 20);
  t.log(`report.html for 100,000 cycles: ${(bytes / 1024).toFixed(0)} KiB, loaded in ${loadMs.toFixed(0)} ms`);
});
