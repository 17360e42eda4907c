// A held box on the bench page, in Debian's chromium against a real
// `parkbench start`: reserved through the operator API (POST
// .../reservation, as `parkbench reserve` does), its card shows the holder,
// the expiry, the note and the first of the queue, and the buttons that
// drive the box are off with the reason as their title; after the holder's
// DELETE the next in the queue holds it, and after that one's the buttons
// are on again; one not renewed leaves the card at its expiry. The page has
// no reservation token, so it never tries to drive a held box: no request
// fails, nothing reaches the console.
import test from 'ava';
import { benchAndBrowserForFile } from '../helpers/bench-and-browser.js';
import { openPage } from '../helpers/browser.js';
import { operatorCall, operatorOk } from '../helpers/operator-call.js';
import { testNeeding } from '../helpers/requires.js';

const browserTest = testNeeding('chromium', test.serial);

/** The card's buttons that drive the box, off while someone else holds it. */
const DRIVING = [
  'open',
  'status',
  'battery',
  'time-set',
  'conformance',
  'fault-jam',
  'fault-low-battery',
  'fault-drop',
  'fault-corrupt',
  'fault-delay',
  'fault-offline',
  'fault-clock-skew',
  'fault-clear',
];

const running = benchAndBrowserForFile(test);

interface Taken {
  token: string;
  holder: string;
  expires_at: string;
}

browserTest(
  'a reserved box: holder, expiry, note and the next in the queue; its driving buttons off with the reason; on again after the releases',
  async (t) => {
    t.timeout(120_000);
    const { bench, browser } = running();
    const box = bench.ready.boxes[0]?.module_id ?? 0;
    const added = await bench.admin('operator', 'add', '--name', 'bob', '--json');
    t.is(added.code, 0, added.stderr);
    const bob = (JSON.parse(added.stdout) as { token: string }).token;

    const opened = await openPage(browser);
    t.teardown(() => opened.context.close());
    const { page } = opened;
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    await page.locator('[data-connection="live"]').waitFor();
    const card = page.locator(`[data-module-id="${box}"]`);
    await card.locator('[data-action="open"]').waitFor();
    for (const action of DRIVING) t.true(await card.locator(`[data-action="${action}"]`).isEnabled(), action);
    t.is(await card.locator('[data-reservation]').count(), 0);

    const mine = await operatorOk<Taken>(
      bench.apiUrl,
      `/boxes/${box}/reservation`,
      { token: bench.token, body: { ttl_seconds: 600, note: 'CI job 123' } },
      201,
    );
    // Bob waits for the box: his request stays open in the queue.
    const bobsTurn = operatorCall<Taken>(bench.apiUrl, `/boxes/${box}/reservation`, {
      token: bob,
      body: { ttl_seconds: 300, wait_seconds: 60, note: 'soak night' },
    });

    const shown = card.locator('[data-reservation][data-holder="page-test"]');
    await shown.waitFor({ timeout: 5_000 });
    t.is(await shown.getAttribute('data-expires-at'), mine.expires_at);
    await card.locator('[data-reservation][data-queue="1"] [data-next="bob"]').waitFor({ timeout: 5_000 });
    const reason = (await shown.locator('.reserved-reason').innerText()).trim();
    t.regex(reason, /^reserved by page-test until \d{1,2}:\d{2}:\d{2} — CI job 123$/);
    t.regex(await shown.innerText(), /next: bob \(soak night\)/);
    for (const action of DRIVING) {
      const button = card.locator(`[data-action="${action}"]`);
      t.true(await button.isDisabled(), `${action} is off`);
      t.is(await button.getAttribute('title'), reason, `${action} says why`);
    }
    t.true(await card.locator('[data-action="capture"]').isEnabled(), 'reading the capture drives nothing');
    t.true(await card.locator('[data-action="runs"]').isEnabled());

    const released = await operatorCall(bench.apiUrl, `/boxes/${box}/reservation`, {
      method: 'DELETE',
      token: bench.token,
      headers: { 'parkbench-reservation': mine.token },
    });
    t.is(released.status, 204);
    const bobs = await bobsTurn;
    t.is(bobs.status, 201, JSON.stringify(bobs.body));
    await card.locator('[data-reservation][data-holder="bob"][data-queue="0"]').waitFor({ timeout: 5_000 });
    t.true(await card.locator('[data-action="open"]').isDisabled());
    t.regex(
      (await card.locator('[data-action="open"]').getAttribute('title')) ?? '',
      /^reserved by bob until .* — soak night$/,
    );

    const bobReleased = await operatorCall(bench.apiUrl, `/boxes/${box}/reservation`, {
      method: 'DELETE',
      token: bob,
      headers: { 'parkbench-reservation': bobs.body.token },
    });
    t.is(bobReleased.status, 204);
    await card.locator('[data-reservation]').waitFor({ state: 'detached', timeout: 5_000 });
    for (const action of DRIVING)
      t.true(await card.locator(`[data-action="${action}"]`).isEnabled(), `${action} on again`);
    t.is((await card.locator('[data-action="open"]').getAttribute('title')) ?? '', '', 'no reason left');
    t.deepEqual([...opened.failedRequests, ...opened.consoleErrors, ...opened.pageErrors, ...opened.dialogs], []);
  },
);

browserTest(
  'a reservation that is not renewed: at its expiry the card drops it and the buttons are on again',
  async (t) => {
    t.timeout(60_000);
    const { bench, browser } = running();
    const box = bench.ready.boxes[1]?.module_id ?? 0;
    const opened = await openPage(browser);
    t.teardown(() => opened.context.close());
    const { page } = opened;
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    await page.locator('[data-connection="live"]').waitFor();
    const card = page.locator(`[data-module-id="${box}"]`);
    await card.locator('[data-action="open"]').waitFor();
    await operatorOk(bench.apiUrl, `/boxes/${box}/reservation`, { token: bench.token, body: { ttl_seconds: 2 } }, 201);
    await card.locator('[data-reservation][data-holder="page-test"]').waitFor({ timeout: 5_000 });
    t.true(await card.locator('[data-action="open"]').isDisabled());
    t.regex(
      (await card.locator('.reserved-reason').innerText()).trim(),
      /^reserved by page-test until \d{1,2}:\d{2}:\d{2}$/,
    );
    await card.locator('[data-reservation]').waitFor({ state: 'detached', timeout: 10_000 });
    for (const action of DRIVING)
      t.true(await card.locator(`[data-action="${action}"]`).isEnabled(), `${action} on again`);
    t.deepEqual([...opened.failedRequests, ...opened.consoleErrors, ...opened.pageErrors, ...opened.dialogs], []);
  },
);
