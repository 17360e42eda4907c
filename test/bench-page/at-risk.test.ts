// A box at risk on the bench page, in Debian's chromium against a real
// `parkbench start`: a driver's smart key is revoked while the exit box is
// offline, and the operator skips that box's REVOKE (the page's operator
// API), so the key still opens the exit box. Its card shows the marker, the
// key with its last error and the remedy as soon as the stream's `boxes`
// message arrives (no new snapshot), and again after a reload; the
// entrance, whose REVOKE was delivered, shows none of it.
import test from 'ava';
import type { Page } from 'playwright-core';
import { benchAndBrowserForFile } from '../helpers/bench-and-browser.js';
import type { BenchProcess } from '../helpers/bench-process.js';
import { openPage } from '../helpers/browser.js';
import { testNeeding } from '../helpers/requires.js';
import { waitFor } from '../helpers/wait.js';

const browserTest = testNeeding('chromium', test.serial);

const running = benchAndBrowserForFile(test);

/** An operator API call with the bench's operator token; its JSON answer. */
async function operatorApi<T>(bench: BenchProcess, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${bench.apiUrl}/api/operator${path}`, {
    method,
    headers: {
      authorization: `Bearer ${bench.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** The demo driver's session at the demo parking: its smart key's id. */
async function demoDriverKey(bench: BenchProcess): Promise<number> {
  const { ready } = bench;
  const login = await fetch(`${bench.apiUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'password',
      username: ready.driver.email,
      password: ready.driver.password,
      client_app_id: ready.client_app_id,
      client_secret: ready.client_secret,
    }),
  });
  if (!login.ok) throw new Error(`login: ${await login.text()}`);
  const { access_token: accessToken } = (await login.json()) as { access_token: string };
  const created = await fetch(`${bench.apiUrl}/api/car_driver/parking_sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ parking_session: { secured_parking_id: ready.parking_id } }),
  });
  if (!created.ok) throw new Error(`session: ${await created.text()}`);
  return ((await created.json()) as { smart_key: { id: number } }).smart_key.id;
}

// Counts the stream's snapshots from the page's first document on (an init
// script, outside the page's CSP): the marker must come with a `boxes` message.
const SNAPSHOTS = `
  window.__snapshots = 0;
  const NativeEventSource = window.EventSource;
  window.EventSource = class extends NativeEventSource {
    constructor(url, init) {
      super(url, init);
      this.addEventListener('snapshot', () => (window.__snapshots += 1));
    }
  };
`;

async function benchPage(bench: BenchProcess, page: Page): Promise<void> {
  await page.addInitScript(SNAPSHOTS);
  await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
  await page.locator('[data-connection="live"]').waitFor();
  for (const box of bench.ready.boxes) await page.locator(`[data-module-id="${box.module_id}"]`).waitFor();
}

browserTest(
  "a REVOKE skipped on an offline box: its card shows it at risk, the key, its last error and the remedy, live and after a reload; the other box's card none of it",
  async (t) => {
    t.timeout(120_000);
    const { bench, browser } = running();
    const { page, context } = await openPage(browser);
    t.teardown(() => context.close());
    await benchPage(bench, page);
    const [entrance, exit] = bench.ready.boxes.map((box) => box.module_id);
    if (entrance === undefined || exit === undefined) throw new Error('the demo has two boxes');
    const entranceCard = page.locator(`[data-module-id="${entrance}"]`);
    const exitCard = page.locator(`[data-module-id="${exit}"]`);
    await page.locator(`[data-module-id="${entrance}"][data-availability="online"]`).waitFor();
    t.is(await page.locator('[data-at-risk], [data-at-risk-badge]').count(), 0, 'no box is at risk yet');
    t.is(await exitCard.getAttribute('data-revocations-missing'), '0');

    // The exit box leaves the broker: the dispatcher sends it nothing while it is offline.
    await operatorApi(bench, 'POST', `/boxes/${exit}/sim`, { offline_seconds: 600 });
    await page.locator(`[data-module-id="${exit}"][data-availability="offline"]`).waitFor({ timeout: 30_000 });
    const keyId = await demoDriverKey(bench);
    await operatorApi(bench, 'POST', `/smart_keys/${keyId}/revoke`);
    const pending = await operatorApi<{ id: number }[]>(bench, 'GET', `/control_commands?box=${exit}&state=pending`);
    const [revoke] = pending;
    if (revoke === undefined) throw new Error(`no pending REVOKE to box ${exit}`);
    await operatorApi(bench, 'POST', `/control_commands/${revoke.id}/skip`);

    const atRisk = exitCard.locator('[data-at-risk]');
    await atRisk.waitFor({ timeout: 10_000 });
    t.is(await page.evaluate('window.__snapshots'), 1, 'the marker came with a boxes message, not a new snapshot');
    t.is(await exitCard.getAttribute('data-revocations-missing'), '1');
    const badge = exitCard.locator('[data-at-risk-badge]');
    t.is(await badge.textContent(), 'at risk');
    t.is(await badge.getAttribute('aria-label'), 'at risk: 1 revoked key still opens this box');
    t.regex((await atRisk.textContent()) ?? '', /At risk: 1 revoked key still opens this box/);
    const key = atRisk.locator(`[data-missing-key="${keyId}"]`);
    t.regex(
      (await key.textContent()) ?? '',
      new RegExp(`^key ${keyId}, open until .+: skipped by operator page-test \\(HTTP\\)`),
    );
    t.regex(
      (await atRisk.locator('[data-remedy]').textContent()) ?? '',
      new RegExp(`^Remedy: parkbench admin parking rotate-issuer --id ${bench.ready.parking_id} --re-sign`),
    );
    // The entrance took its REVOKE: the key opens it no more.
    await waitFor(
      async () => {
        const done = await operatorApi<unknown[]>(bench, 'GET', `/control_commands?box=${entrance}&state=done`);
        return done.length > 0;
      },
      "the entrance's REVOKE delivered",
      20_000,
    );
    t.is(await entranceCard.getAttribute('data-revocations-missing'), '0');
    t.is(await entranceCard.locator('[data-at-risk], [data-at-risk-badge]').count(), 0);

    // From the snapshot of a new stream as well.
    await page.reload();
    await page.locator('[data-connection="live"]').waitFor();
    await exitCard.locator(`[data-at-risk] [data-missing-key="${keyId}"]`).waitFor();
    t.is(await exitCard.locator('[data-remedy]').count(), 1);
    t.is(await entranceCard.locator('[data-at-risk], [data-at-risk-badge]').count(), 0);
  },
);
