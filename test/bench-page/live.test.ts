// The bench page while things happen, in Debian's chromium against a real
// `parkbench start`: a session's ACCESS through MQTT moves the card's
// barrier and its box log reaches the stream within a second, its latency
// shown to the whole second; a jam set from
// the page makes the next ACCESS answer BARRIER_FAULT; a conformance run
// from the page shows every case, and one against a silent box is cancelled
// from the page; a reconnect with last_event_id misses no box log.
import Database from 'better-sqlite3';
import test, { type ExecutionContext } from 'ava';
import { appSessionArgs } from '../../lib/app-session-args.js';
import type { Page } from 'playwright-core';
import { benchAndBrowserForFile } from '../helpers/bench-and-browser.js';
import type { BenchProcess } from '../helpers/bench-process.js';
import { openPage } from '../helpers/browser.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

const browserTest = testNeeding('chromium', test.serial);

const running = benchAndBrowserForFile(test);

// Recorded in the page from its first document on (an init script runs
// before the bundle, outside the page's CSP): when each box-log row first
// appeared, every barrier state each card showed, and how many snapshots
// the stream sent.
const RECORDER = `
  window.__rowsSeen = {};
  window.__barriers = {};
  window.__snapshots = 0;
  window.__streamed = {};
  const NativeEventSource = window.EventSource;
  window.EventSource = class extends NativeEventSource {
    constructor(url, init) {
      super(url, init);
      this.addEventListener('snapshot', () => (window.__snapshots += 1));
      window.__events ??= [];
      for (const name of ['snapshot', 'boxes', 'box_logs', 'sessions', 'forwarding', 'control', 'conformance'])
        this.addEventListener(name, (m) => window.__events.push([name, Date.now() % 100000, m.lastEventId, m.data.length]));
      // What the stream sent (every message, and each barrier it said), to tell a stream fault from a page fault.
      this.addEventListener('boxes', (message) => {
        for (const box of JSON.parse(message.data).boxes) {
          const list = (window.__streamed[box.module_id] ??= []);
          list.push(box.live ? box.live.barrier : 'no live state');
        }
      });
    }
  };
  new MutationObserver(() => {
    const now = Date.now();
    for (const row of document.querySelectorAll('[data-box-log-id]')) {
      const id = row.getAttribute('data-box-log-id');
      if (!(id in window.__rowsSeen)) window.__rowsSeen[id] = now;
    }
    for (const card of document.querySelectorAll('[data-module-id]')) {
      const id = card.getAttribute('data-module-id');
      const list = (window.__barriers[id] ??= []);
      const state = card.getAttribute('data-barrier');
      if (list[list.length - 1] !== state) list.push(state);
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-barrier'] });
`;

async function livePage(t: ExecutionContext): Promise<Page> {
  const { bench, browser } = running();
  const opened = await openPage(browser);
  t.teardown(() => opened.context.close());
  await opened.page.addInitScript(RECORDER);
  await opened.page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
  await opened.page.locator('[data-connection="live"]').waitFor();
  for (const box of bench.ready.boxes)
    await opened.page.locator(`[data-module-id="${box.module_id}"][data-availability="online"]`).waitFor();
  return opened.page;
}

function boxLogs(bench: BenchProcess): { id: number; received_at: number; equipment_id: number }[] {
  const db = new Database(bench.databasePath, { readonly: true });
  try {
    return db.prepare('SELECT id, received_at, equipment_id FROM box_logs ORDER BY id').all() as {
      id: number;
      received_at: number;
      equipment_id: number;
    }[];
  } finally {
    db.close();
  }
}

function appArgs(bench: BenchProcess): string[] {
  return appSessionArgs(bench.ready);
}

browserTest(
  'a session through MQTT: the entrance card goes up and back to closed; each box log is in the stream within a second of being stored',
  async (t) => {
    t.timeout(120_000);
    const { bench } = running();
    const page = await livePage(t);
    const entrance = bench.ready.boxes[0]?.module_id ?? 0;
    const before = new Set(boxLogs(bench).map((log) => log.id));
    const app = await runCli(appArgs(bench));
    t.is(app.code, 0, `${app.stdout}\n${app.stderr}`);
    // The card starts closed: first it must leave closed (the page applies the
    // stream's messages on the next animation frame, so the app's return can
    // come before the card moves), then come back to it.
    await page.locator(`[data-module-id="${entrance}"]:not([data-barrier="closed"])`).waitFor({ timeout: 30_000 });
    await page.locator(`[data-module-id="${entrance}"][data-barrier="closed"]`).waitFor({ timeout: 30_000 });
    const barriers = await page.evaluate<string[]>(`window.__barriers[${JSON.stringify(String(entrance))}]`);
    const streamed = await page.evaluate<string[] | undefined>(
      `window.__streamed[${JSON.stringify(String(entrance))}]`,
    );
    const messages = await page.evaluate<unknown[]>('window.__events');
    t.true(
      barriers.includes('opening'),
      `the card showed ${barriers.join(' -> ')}; the stream said ${(streamed ?? []).join(' -> ')}; ` +
        `its messages (name, ms, id, bytes): ${JSON.stringify(messages)}`,
    );
    t.is(barriers.at(-1), 'closed');
    t.true(barriers.indexOf('opening') < barriers.lastIndexOf('closed'));

    const fresh = boxLogs(bench).filter((log) => !before.has(log.id));
    t.true(fresh.length >= 2, 'the entrance and the exit logs');
    for (const log of fresh) await page.locator(`[data-box-log-id="${log.id}"]`).waitFor({ timeout: 5_000 });
    const seen = await page.evaluate<Record<string, number>>('window.__rowsSeen');
    for (const log of fresh) {
      const delay = (seen[String(log.id)] ?? Infinity) - log.received_at;
      t.true(delay < 1_000, `box log ${log.id} reached the stream ${delay} ms after it was stored`);
    }
    // Latency at the resolution a box log's created_at has, whole seconds: no milliseconds made up.
    for (const log of fresh) {
      const row = (await page.locator(`[data-box-log-id="${log.id}"]`).innerText()).trim();
      t.regex(row, /\s< \d+ s$/, `box log ${log.id}: "${row}"`);
    }
  },
);

browserTest(
  'a jam set from the page: the next ACCESS from the page answers BARRIER_FAULT, in the card and the stream',
  async (t) => {
    t.timeout(90_000);
    const { bench } = running();
    const page = await livePage(t);
    const box = bench.ready.boxes[0]?.module_id ?? 0;
    const card = page.locator(`[data-module-id="${box}"]`);
    const result = card.locator('[data-action-result]');

    await card.locator('[data-action="fault-jam"]').click();
    await card.locator('[data-action-result][data-outcome="ok"]').waitFor();
    // The 202 says the API published the jam; the box's own state says it took it.
    await card
      .locator('.faults')
      .filter({ hasText: /^Faults: jam$/ })
      .waitFor({ timeout: 20_000 });
    await card.locator('[data-action="open"]').click();
    await result.filter({ hasText: 'BARRIER_FAULT' }).waitFor({ timeout: 20_000 });
    t.is(await result.getAttribute('data-outcome'), 'error');
    const row = page.locator('[data-stream="box-logs"] [data-status="BARRIER_FAULT"]').first();
    await row.waitFor({ timeout: 5_000 });
    t.regex((await row.textContent()) ?? '', new RegExp(String(box)));

    // Cleared from the page: the next ACCESS opens again.
    await card.locator('[data-action="fault-clear"]').click();
    await result.filter({ hasText: 'sent' }).waitFor();
    // As with the jam: the box's own state must say the fault is gone first.
    await card.locator('.faults').waitFor({ state: 'detached', timeout: 20_000 });
    await card.locator('[data-action="open"]').click();
    await result.filter({ hasText: /^OK/ }).waitFor({ timeout: 20_000 });
    await card
      .locator('[data-barrier="closed"]')
      .or(page.locator(`[data-module-id="${box}"][data-barrier="closed"]`))
      .first()
      .waitFor({ timeout: 30_000 });
    t.pass();
  },
);

browserTest(
  'a conformance run from the page shows every case of the run as the stream tells them (no poll while live), then its JUnit and JSON links',
  async (t) => {
    t.timeout(300_000);
    const { bench } = running();
    const page = await livePage(t);
    const box = bench.ready.boxes[1]?.module_id ?? 0;
    // The run's cases come through the event stream: the page asks for the run
    // itself only while the stream is down, which it never is here.
    const runFetches: string[] = [];
    page.on('request', (request) => {
      if (/\/api\/operator\/conformance\/[^/]+$/.test(new URL(request.url()).pathname)) runFetches.push(request.url());
    });
    await page.locator(`[data-module-id="${box}"] [data-action="conformance"]`).click();
    const panel = page.locator('[data-conformance-run]').first();
    await panel.waitFor();
    const runId = (await panel.getAttribute('data-conformance-run')) ?? '';
    await page.locator(`[data-conformance-run="${runId}"]:not([data-state="running"])`).waitFor({ timeout: 280_000 });
    const response = await fetch(`${bench.apiUrl}/api/operator/conformance/${runId}`, {
      headers: { authorization: `Bearer ${bench.token}` },
    });
    const { run } = (await response.json()) as { run: { state: string; cases: { name: string; result: string }[] } };
    t.true(run.cases.length > 0);
    t.is(await panel.getAttribute('data-state'), run.state);
    const rows = panel.locator('[data-case]');
    t.is(await rows.count(), run.cases.length);
    for (const [index, c] of run.cases.entries()) {
      t.is(await rows.nth(index).getAttribute('data-case'), c.name);
      t.is(await rows.nth(index).getAttribute('data-result'), c.result);
    }
    t.is(await panel.locator('a[data-download="junit"]').count(), 1);
    t.is(await panel.locator('a[data-download="json"]').count(), 1);
    t.deepEqual(runFetches, [], 'the page polled the run while the stream was live');
  },
);

browserTest(
  "a conformance run against a box that drops every command: the run's Cancel button stops it at once, the run ends in error saying who cancelled it",
  async (t) => {
    t.timeout(120_000);
    const { bench } = running();
    const page = await livePage(t);
    const box = bench.ready.boxes[0]?.module_id ?? 0;
    const api = (method: 'GET' | 'POST', path: string, body?: unknown) =>
      fetch(`${bench.apiUrl}/api/operator${path}`, {
        method,
        headers: {
          authorization: `Bearer ${bench.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    t.is((await api('POST', `/boxes/${box}/sim`, { drop_commands: 1 })).status, 202);
    t.teardown(async () => {
      await api('POST', `/boxes/${box}/sim`, { drop_commands: 0 });
    });
    // The box shows the fault in its published state before the run starts.
    await waitFor(
      async () => {
        const parkings = (await (await api('GET', '/parkings')).json()) as {
          boxes: { module_id: number; live: { faults: string[] } | null }[];
        }[];
        const live = parkings.flatMap((parking) => parking.boxes).find((entry) => entry.module_id === box)?.live;
        return live?.faults.some((fault) => fault.startsWith('drop_commands')) === true;
      },
      'the drop fault in the box state',
      10_000,
    );
    // Started through the API with a long answer time: the run waits a
    // minute for the box's first answer (twice answer_ms), so it is still
    // running when the page's Cancel is clicked, however loaded the machine.
    const start = await api('POST', `/boxes/${box}/conformance`, { answer_ms: 30_000 });
    t.is(start.status, 202, await start.clone().text());
    const runId = ((await start.json()) as { run: { id: string } }).run.id;
    const going = page.locator(`[data-conformance-run="${runId}"][data-state="running"]`);
    await going.waitFor();
    await going.locator('[data-action="conformance-cancel"]').click();
    const ended = page.locator(`[data-conformance-run="${runId}"][data-state="error"]`);
    await ended.waitFor({ timeout: 15_000 });
    t.regex((await ended.locator('[data-run-error]').textContent()) ?? '', /^cancelled by operator page-test/);
    t.is(await ended.locator('[data-action="conformance-cancel"]').count(), 0);
    const { run } = (await (await api('GET', `/conformance/${runId}`)).json()) as {
      run: { state: string; error: string; module_id: number };
    };
    t.like(run, { state: 'error', module_id: box });
    t.regex(run.error, /^cancelled by operator page-test/);
  },
);

browserTest(
  'a reconnect with last_event_id: the box logs stored while the page was away all reach the stream, replayed',
  async (t) => {
    t.timeout(90_000);
    const { bench } = running();
    const page = await livePage(t);
    const box = bench.ready.boxes[1]?.module_id ?? 0;
    // Hold the page's next stream request until the logs below are stored.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldUrl = '';
    await page.route(/\/api\/operator\/events\?/, async (route) => {
      heldUrl = route.request().url();
      await released;
      await route.continue();
    });
    const before = new Set(boxLogs(bench).map((log) => log.id));
    await page.locator('[data-action="reconnect"]').click();
    await page.locator('[data-connection="reconnecting"]').waitFor();
    for (let sent = 0; sent < 3; sent += 1) {
      const answer = await fetch(`${bench.apiUrl}/api/operator/boxes/${box}/commands`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bench.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ command: 'battery_query' }),
      });
      t.is(answer.status, 200, await answer.text());
    }
    const missed = boxLogs(bench).filter((log) => !before.has(log.id));
    t.true(missed.length >= 3);
    for (const log of missed) t.is(await page.locator(`[data-box-log-id="${log.id}"]`).count(), 0, 'not shown yet');
    await t.notThrowsAsync(async () => {
      for (let tries = 0; heldUrl === '' && tries < 100; tries += 1) await page.waitForTimeout(50);
    });
    t.regex(heldUrl, /[?&]last_event_id=\d+/, 'the page resumes from the last event it had');
    t.notRegex(heldUrl, new RegExp(bench.token), 'the operator token is not in the URL');
    t.is(await page.evaluate<number>('window.__snapshots'), 1);
    release();
    await page.locator('[data-connection="live"]').waitFor();
    for (const log of missed) await page.locator(`[data-box-log-id="${log.id}"]`).waitFor({ timeout: 5_000 });
    t.is(await page.evaluate<number>('window.__snapshots'), 1, 'resumed with the missed events, not a fresh snapshot');
  },
);
