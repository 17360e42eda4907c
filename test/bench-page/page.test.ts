// The bench page in a real browser (Debian's chromium through
// playwright-core) against a real `parkbench start`: the API with its
// embedded broker and the demo's two simulated boxes on MQTT. What a page
// must do before anything moves: ask for a token, show the boxes with their
// hooks, send its Content-Security-Policy and break none of it, keep hostile
// names as text, fit a phone's width, show the newest sessions of a busy day.
import Database from 'better-sqlite3';
import test from 'ava';
import { benchAndBrowserForFile } from '../helpers/bench-and-browser.js';
import type { BenchProcess } from '../helpers/bench-process.js';
import { DESKTOP, PHONE, openPage, scrollsSideways } from '../helpers/browser.js';
import { gone, ok, startReceiver } from '../helpers/receiver.js';
import { testNeeding } from '../helpers/requires.js';
import { waitFor } from '../helpers/wait.js';

const browserTest = testNeeding('chromium', test.serial);

const HOSTILE = '<img src=x onerror=alert(document.domain)>';

let hostileParkingId = 0;
let hostile: { accessToken: string; sessionId: number; smartKeyId: number } | undefined;

const running = benchAndBrowserForFile(test, async (bench) => {
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
  hostile = await driverSession(bench, 'hostile@example.com', 'correct horse battery');
});

/** Logs the driver in through the API (the demo's OAuth client) and starts a session at the demo parking. */
async function driverSession(
  bench: BenchProcess,
  email: string,
  password: string,
): Promise<{ accessToken: string; sessionId: number; smartKeyId: number }> {
  const { ready } = bench;
  const login = await fetch(`${bench.apiUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'password',
      username: email,
      password,
      client_app_id: ready.client_app_id,
      client_secret: ready.client_secret,
    }),
  });
  if (!login.ok) throw new Error(`login of ${email}: ${await login.text()}`);
  const accessToken = ((await login.json()) as { access_token: string }).access_token;
  const created = await fetch(`${bench.apiUrl}/api/car_driver/parking_sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ parking_session: { secured_parking_id: ready.parking_id } }),
  });
  if (!created.ok) throw new Error(`session of ${email}: ${await created.text()}`);
  const body = (await created.json()) as { parking_session: { id: number }; smart_key: { id: number } };
  return { accessToken, sessionId: body.parking_session.id, smartKeyId: body.smart_key.id };
}

async function pendingControlCommands(bench: BenchProcess): Promise<unknown[]> {
  const answer = await fetch(`${bench.apiUrl}/api/operator/control_commands?state=pending`, {
    headers: { authorization: `Bearer ${bench.token}` },
  });
  if (!answer.ok) throw new Error(`control commands: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as unknown[];
}

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
  'logged in by #token: both demo boxes with their hooks, labelled simulated, the fragment gone, the CSP sent and nothing refused',
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
      t.is(await card.locator('[data-box-kind]').textContent(), 'simulated');
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
  // The driver's first and last names, in the sessions table, as text.
  const driver = page.locator(`[data-session-id="${hostile?.sessionId ?? 0}"] [data-driver]`);
  await driver.waitFor();
  t.is(await driver.textContent(), `${HOSTILE} ${HOSTILE} · hostile@example.com`);
  t.is(await page.locator('img').count(), 0);
  t.deepEqual(opened.dialogs, []);
  t.deepEqual(opened.cspViolations, []);
});

browserTest(
  "revoke from the page: the session's keys (known before any box log) are revoked, the row says so, the driver's open is refused",
  async (t) => {
    const { bench, browser } = running();
    const { ready } = bench;
    const driver = await driverSession(bench, ready.driver.email, ready.driver.password);
    const opened = await openPage(browser);
    const { page, context } = opened;
    t.teardown(() => context.close());
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    const row = page.locator(`[data-session-id="${driver.sessionId}"]`);
    await row.waitFor();
    await row.locator('[data-action="revoke"]').click();
    const result = row.locator('[data-action-result][data-outcome="ok"]');
    await result.waitFor();
    t.regex((await result.textContent()) ?? '', /^revoked 1 key\(s\)/);
    const open = await fetch(`${bench.apiUrl}/api/car_driver/smart_keys/${driver.smartKeyId}/open`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${driver.accessToken}` },
      body: JSON.stringify({ module_id: ready.boxes[0]?.module_id ?? 0 }),
    });
    t.is(open.status, 403);
    t.like(await open.json(), { error: 'smart_key_revoked' });
    // Both demo boxes answer their REVOKE; their box logs are stored before
    // the next test counts a parking's forwarded logs.
    await waitFor(
      async () => (await pendingControlCommands(bench)).length === 0,
      'the demo boxes to answer the REVOKE',
      10_000,
    );
    t.deepEqual(opened.pageErrors, []);
  },
);

browserTest(
  "forwarding from the page: a parking forwarding to a local receiver shows its pending log, then the page's retry and the delivery",
  async (t) => {
    const { bench, browser } = running();
    const { ready } = bench;
    if (hostile === undefined) throw new Error('no hostile driver session');
    // The receiver first answers 410 Gone (the URL is disabled: the log stays
    // pending), then 200 once the page's retry has enabled it again.
    const receiver = await startReceiver(t, [gone, ok]);
    const set = await bench.admin(
      'parking',
      'forwarding',
      '--parking',
      String(ready.parking_id),
      '--url',
      receiver.url,
      '--expose',
      'true',
      '--forward-unverified',
      'true',
    );
    t.is(set.code, 0, set.stderr);
    const opened = await openPage(browser);
    const { page, context } = opened;
    t.teardown(() => context.close());
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    await page.locator('[data-connection="live"]').waitFor();

    // The driver's phone posts a box log of the demo parking (unverified: forwarded as set above).
    const me = (await (
      await fetch(`${bench.apiUrl}/api/car_driver/me`, { headers: { authorization: `Bearer ${hostile.accessToken}` } })
    ).json()) as { id: number };
    const posted = await fetch(`${bench.apiUrl}/api/box_logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hostile.accessToken}` },
      body: JSON.stringify({
        box_logs: [
          {
            box_log: {
              fo_user_id: me.id,
              smart_key_id: hostile.smartKeyId,
              equipment_id: ready.boxes[0]?.module_id ?? 0,
              secured_parking_id: ready.parking_id,
              type: 'in',
              command: null,
              command_decrypted: null,
              response: null,
              response_decrypted: null,
              offline: true,
              created_at: '2026-01-01 00:00:00',
              point_attributes: { latitude: 48.8566, longitude: 2.3522 },
            },
          },
        ],
      }),
    });
    t.is(posted.status, 201, await posted.text());
    const row = page.locator(`[data-forwarding-parking-id="${ready.parking_id}"]`);
    const cells = row.locator('td');
    await receiver.waitFor(1);
    // Pending, with the 410's error, delivered none.
    await row.filter({ hasText: /410/ }).waitFor({ timeout: 10_000 });
    t.is(await cells.nth(1).textContent(), '1');
    t.is(await cells.nth(2).textContent(), '0');

    await row.locator('[data-action="forwarding-retry"]').click();
    const result = row.locator('[data-action-result][data-outcome="ok"]');
    await result.waitFor();
    t.regex((await result.textContent()) ?? '', /deliveries retried/);
    await receiver.waitFor(2);
    await page
      .locator(`[data-forwarding-parking-id="${ready.parking_id}"] td:nth-child(3)`)
      .filter({ hasText: /^1$/ })
      .waitFor({ timeout: 10_000 });
    t.is(await cells.nth(1).textContent(), '0', 'nothing pending');
    t.deepEqual(opened.pageErrors, []);
  },
);

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

// Last: it fills the day with sessions, which the tests above do not expect.
browserTest(
  'a day of more sessions than a snapshot holds: the newest 200 shown, the page says how many there are, a new one comes first',
  async (t) => {
    const { bench, browser } = running();
    const { ready } = bench;
    // 250 sessions started today, written straight into the bench's database (its API reads them at the next snapshot).
    const db = new Database(bench.databasePath);
    const now = Date.now();
    const dayStart = Math.floor(now / 86_400_000) * 86_400_000;
    db.pragma('busy_timeout = 10000');
    const addUser = db.prepare(
      "INSERT INTO users (email, password_hash, first_name, last_name, phone, created_at) VALUES (?, 'x', 'Many', ?, '+100', ?)",
    );
    const addSession = db.prepare(
      `INSERT INTO parking_sessions (user_id, parking_id, state, start_time, end_time, entrance_remaining_tries,
         exit_remaining_tries, amount_minor, currency, created_at) VALUES (?, ?, 'finished', ?, ?, 3, 3, 100, 'EUR', ?)`,
    );
    const ids = db.transaction(() =>
      Array.from({ length: 250 }, (_, n) => {
        const userId = Number(addUser.run(`many-${n}@example.com`, String(n), now).lastInsertRowid);
        const start = Math.max(dayStart, now - 60_000 + n);
        return Number(addSession.run(userId, ready.parking_id, start, start + 3_600_000, now).lastInsertRowid);
      }),
    )();
    const total = (
      db
        .prepare("SELECT count(*) AS n FROM parking_sessions WHERE start_time >= ? OR state <> 'finished'")
        .get(dayStart) as { n: number }
    ).n;
    db.close();

    const opened = await openPage(browser);
    const { page, context } = opened;
    t.teardown(() => context.close());
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    const cut = page.locator('[data-sessions-cut]');
    await cut.waitFor();
    t.is(await cut.textContent(), `The newest 200 of ${total} sessions of the day.`);
    t.is(await page.locator('[data-session-id]').count(), 200);
    t.is(await page.locator(`[data-session-id="${ids.at(-1) ?? 0}"]`).count(), 1, 'the newest is shown');
    t.is(await page.locator(`[data-session-id="${ids[0] ?? 0}"]`).count(), 0, 'the oldest is not');

    // A new session comes first, counted; the oldest shown leaves.
    const created = await bench.admin(
      'user',
      'create',
      '--email',
      'one.more@example.com',
      '--password',
      'correct horse battery',
      '--first-name',
      'One',
      '--last-name',
      'More',
      '--phone',
      '+10000000002',
    );
    t.is(created.code, 0, created.stderr);
    const latest = await driverSession(bench, 'one.more@example.com', 'correct horse battery');
    await page.locator(`[data-session-id="${latest.sessionId}"]`).waitFor();
    await page.locator(`[data-sessions-total="${total + 1}"]`).waitFor();
    t.is(await cut.textContent(), `The newest 200 of ${total + 1} sessions of the day.`);
    t.is(await page.locator('[data-session-id]').count(), 200);
    t.deepEqual(opened.pageErrors, []);
  },
);
