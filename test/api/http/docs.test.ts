// The browsable API docs (/docs, Swagger UI) in a real browser (Debian's
// chromium through playwright-core) against a real server: the page and each
// of its assets send a Content-Security-Policy, X-Frame-Options DENY, nosniff
// and no Referer, and Swagger UI still renders the operations list, runs
// "Try it out" and breaks none of the policy; the description's
// `Authorization: Bearer <token>` reads as written.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { chromiumInstalled } from '../../../testkit/chromium.js';
import { DOCS_CSP } from '../../../api/http/docs.js';
import { testApp } from '../../helpers/api-app.js';
import { launchBrowser, openPage } from '../../helpers/browser.js';
import { testNeeding } from '../../helpers/requires.js';

const browserTest = testNeeding('chromium', test.serial);

let browser: Browser | undefined;

test.before(async () => {
  // Nothing to start when chromium is absent: the tests below are skipped.
  if (chromiumInstalled()) browser = await launchBrowser();
});

test.after.always(async () => {
  await browser?.close();
});

browserTest(
  '/docs renders its operations and runs "Try it out" under its CSP: no violation, no page error; every asset sends the headers',
  async (t) => {
    if (browser === undefined) throw new Error('the browser did not start');
    const app = await testApp(t);
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    const opened = await openPage(browser);
    t.teardown(() => opened.context.close());
    const docsResponses: { url: string; headers: Record<string, string> }[] = [];
    opened.page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/docs'))
        docsResponses.push({ url: response.url(), headers: response.headers() });
    });

    await opened.page.goto(`${base}/docs`);
    await opened.page.waitForSelector('.opblock', { timeout: 30_000 });
    t.true((await opened.page.locator('.opblock').count()) > 10, 'the operations list');
    t.regex(await opened.page.locator('.info').innerText(), /Authorization: Bearer <token>\./);

    // "Try it out" on GET /health: a fetch to this origin, shown in the page.
    const health = opened.page.locator('#operations-health-get_health, .opblock-get:has-text("/health")').first();
    await health.locator('.opblock-summary').click();
    await health.locator('button.try-out__btn').click();
    await health.locator('button.execute').click();
    const status = health.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    t.regex(await status.innerText(), /^200/);

    t.deepEqual(opened.cspViolations, []);
    t.deepEqual(opened.pageErrors, []);
    t.deepEqual(opened.consoleErrors, []);
    t.true(docsResponses.some((response) => response.url.endsWith('swagger-ui-bundle.js')));
    for (const { url, headers } of docsResponses) {
      t.is(headers['content-security-policy'], DOCS_CSP, url);
      t.is(headers['x-frame-options'], 'DENY', url);
      t.is(headers['x-content-type-options'], 'nosniff', url);
      t.is(headers['referrer-policy'], 'no-referrer', url);
    }
  },
);
