// The bench page in a real browser (Debian's chromium through
// playwright-core) against a real `parkbench start`: the API with its
// embedded broker and the demo's two simulated boxes on MQTT. What a page
// must do before anything moves: ask for a token, show the boxes with their
// hooks, send its Content-Security-Policy and break none of it, keep hostile
// names as text, fit a phone's width.
import test from 'ava';
import type { Browser } from 'playwright-core';
import type { BenchProcess } from '../helpers/bench-process.js';
import { startBenchProcess } from '../helpers/bench-process.js';
import { DESKTOP, PHONE, launchBrowser, openPage, scrollsSideways } from '../helpers/browser.js';
import { testNeeding } from '../helpers/requires.js';

const browserTest = testNeeding('chromium', test.serial);

const HOSTILE = '<img src=x onerror=alert(document.domain)>';

let bench: BenchProcess | undefined;
let browser: Browser | undefined;
let hostileParkingId = 0;

function running(): { bench: BenchProcess; browser: Browser } {
  if (bench === undefined || browser === undefined) throw new Error('the bench or the browser did not start');
  return { bench, browser };
}

test.before(async () => {
  // Nothing to start when chromium is absent: the tests below are skipped.
  if (!(await import('../../lib/chromium.js')).chromiumInstalled()) return;
  bench = await startBenchProcess();
  const parking = await bench.admin(
    'parking',
    'create',
    '--name',
    HOSTILE,
    '--description',
    HOSTILE,
    '--currency',
    'EUR',
    '--price-per-hour',
    '1.00',
    '--max-duration-minutes',
    '60',
    '--json',
  );
  if (parking.code !== 0) throw new Error(parking.stderr);
  hostileParkingId = (JSON.parse(parking.stdout) as { id: number }).id;
  const driver = await bench.admin(
    'user',
    'create',
    '--email',
    'hostile@example.com',
    '--password',
    'correct horse battery',
    '--first-name',
    HOSTILE,
    '--last-name',
    HOSTILE,
    '--phone',
    '+10000000001',
  );
  if (driver.code !== 0) throw new Error(driver.stderr);
  browser = await launchBrowser();
});

test.after.always(async () => {
  await browser?.close();
  await bench?.stop();
});

browserTest('no token: the login form; a bad token: the API error in the form, no bench shown', async (t) => {
  const { bench, browser } = running();
  const { page, context } = await openPage(browser);
  t.teardown(() => context.close());
  const response = await page.goto(`${bench.apiUrl}/bench`);
  t.is(response?.status(), 200);
  const form = page.locator('[data-login]');
  await form.waitFor();
  t.is(await page.getByLabel('Operator token').getAttribute('name'), 'token');
  t.is(await page.locator('[data-module-id]').count(), 0);

  await page.getByLabel('Operator token').fill('not-a-token');
  await page.locator('[data-login] button[type="submit"]').click();
  await page.locator('[data-login-error]').waitFor();
  t.regex((await page.locator('[data-login-error]').textContent()) ?? '', /malformed, unknown, revoked or expired/);
  t.is(await page.locator('[data-module-id]').count(), 0);
  t.is(await page.evaluate('sessionStorage.length'), 0, 'a refused token is not kept');
});

browserTest(
  'logged in by #token: both demo boxes with their hooks, the fragment gone, the CSP sent and nothing refused',
  async (t) => {
    const { bench, browser } = running();
    const opened = await openPage(browser);
    const { page, context } = opened;
    t.teardown(() => context.close());
    const response = await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    t.regex(csp, /default-src 'none'/);
    t.regex(csp, /script-src 'self'(;|$)/);
    t.is(response?.headers()['x-content-type-options'], 'nosniff');

    const parking = page.locator(`[data-parking-id="${bench.ready.parking_id}"]`);
    for (const box of bench.ready.boxes) {
      const card = parking.locator(`[data-module-id="${box.module_id}"]`);
      await card.waitFor();
      t.regex((await card.getAttribute('data-barrier')) ?? '', /^(closed|opening|open|closing|fault)$/);
      // The simulated boxes are on MQTT: online once the API heard their retained state.
      await page.waitForSelector(`[data-module-id="${box.module_id}"][data-availability="online"]`);
      for (const action of ['open', 'status', 'battery', 'time-set', 'fault-jam', 'fault-clear', 'conformance'])
        t.is(await card.locator(`button[data-action="${action}"]`).count(), 1, action);
    }
    t.is(new URL(page.url()).hash, '', 'the token left the address bar');
    t.is(await page.evaluate('sessionStorage.length'), 1, 'the token is kept for the tab');
    t.is(await page.locator('[data-connection="live"]').count(), 1);
    t.is(await page.locator('[data-stream="box-logs"]').count(), 1);
    t.deepEqual(opened.cspViolations, []);
    t.deepEqual(opened.pageErrors, []);
  },
);

browserTest('a parking and a driver named <img src=x onerror=...> stay text: no img element, no dialog', async (t) => {
  const { bench, browser } = running();
  const opened = await openPage(browser);
  const { page, context } = opened;
  t.teardown(() => context.close());
  await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
  const section = page.locator(`[data-parking-id="${hostileParkingId}"]`);
  await section.waitFor();
  t.is(await section.locator('.parking-name').textContent(), HOSTILE);
  t.is(await page.locator('img').count(), 0);
  t.deepEqual(opened.dialogs, []);
  t.deepEqual(opened.cspViolations, []);
});

browserTest('1280x800 and 390x844: no sideways scrolling, every button reachable by keyboard', async (t) => {
  const { bench, browser } = running();
  for (const viewport of [DESKTOP, PHONE]) {
    const { page, context } = await openPage(browser, viewport);
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    await page.locator(`[data-module-id="${bench.ready.boxes[0]?.module_id ?? 0}"]`).waitFor();
    t.false(await scrollsSideways(page), `${viewport.width}x${viewport.height} scrolls sideways`);
    // Tab reaches the first card's Open button (real buttons, in order).
    let reached = false;
    for (let presses = 0; presses < 40 && !reached; presses += 1) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate("document.activeElement?.getAttribute('data-action') ?? ''")) === 'open';
    }
    t.true(reached, `Tab reaches an Open button at ${viewport.width}x${viewport.height}`);
    await context.close();
  }
  // The login form too.
  const { page, context } = await openPage(browser, PHONE);
  t.teardown(() => context.close());
  await page.goto(`${bench.apiUrl}/bench`);
  await page.locator('[data-login]').waitFor();
  t.false(await scrollsSideways(page));
});
