// The capture button in Debian's chromium against a real `parkbench start`:
// a battery query from a box card, then that card's capture downloaded
// (GET /api/operator/boxes/:module_id/capture through the page's token, a
// Blob saved by an <a download>) holds that command and its response, under
// the page's Content-Security-Policy, nothing refused.
import Database from 'better-sqlite3';
import test from 'ava';
import { CaptureDirection, RecordKind } from '../../lib/capture/record.js';
import { benchAndBrowserForFile } from '../helpers/bench-and-browser.js';
import type { BenchProcess } from '../helpers/bench-process.js';
import { openPage } from '../helpers/browser.js';
import { readCapture } from '../helpers/pcapng.js';
import { testNeeding } from '../helpers/requires.js';

const browserTest = testNeeding('chromium', test.serial);

const running = benchAndBrowserForFile(test);

/** The newest box log of a box: the command and response its capture must hold. */
function newestLog(bench: BenchProcess, moduleId: number): { command: string; response: string } | undefined {
  const db = new Database(bench.databasePath, { readonly: true });
  try {
    return db
      .prepare('SELECT command, response FROM box_logs WHERE equipment_id = ? ORDER BY id DESC LIMIT 1')
      .get(moduleId) as { command: string; response: string } | undefined;
  } finally {
    db.close();
  }
}

browserTest(
  "the capture button saves the box's pcapng: its last command and response, as the API sent and received them",
  async (t) => {
    t.timeout(90_000);
    const { bench, browser } = running();
    const opened = await openPage(browser);
    const { page, context } = opened;
    t.teardown(() => context.close());
    await page.goto(`${bench.apiUrl}/bench#token=${bench.token}`);
    await page.locator('[data-connection="live"]').waitFor();
    const [entrance, exit] = bench.ready.boxes.map((box) => box.module_id);
    if (entrance === undefined || exit === undefined) throw new Error('the demo has two boxes');
    // Traffic of the other box first, which must not be in this box's capture.
    const other = page.locator(`[data-module-id="${exit}"][data-availability="online"]`);
    await other.waitFor();
    await other.locator('[data-action="battery"]').click();
    await other.locator('[data-action-result][data-outcome="ok"]').waitFor({ timeout: 20_000 });
    const card = page.locator(`[data-module-id="${entrance}"][data-availability="online"]`);
    await card.waitFor();
    await card.locator('[data-action="battery"]').click();
    await card.locator('[data-action-result][data-outcome="ok"]').waitFor({ timeout: 20_000 });
    const log = newestLog(bench, entrance);
    if (log === undefined) throw new Error('the battery query left no box log');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      card.locator('[data-action="capture"]').click(),
    ]);
    t.regex(download.suggestedFilename(), new RegExp(`^box-${entrance}-\\d{8}T\\d{6}Z\\.pcapng$`));
    const capture = readCapture(await download.path());
    t.false(capture.truncated);
    t.regex(capture.application ?? '', /^parkbench \S+ api$/);
    t.deepEqual(
      capture.interfaces.map(({ name }) => name.startsWith('mqtt:mqtt://')),
      [true],
    );
    const frames = capture.packets.flatMap(({ record }) =>
      record?.kind === RecordKind.frame && record.moduleId === entrance
        ? [[record.direction, Buffer.from(record.data).toString('base64')]]
        : [],
    );
    t.deepEqual(frames.slice(-2), [
      [CaptureDirection.toBox, log.command],
      [CaptureDirection.fromBox, log.response],
    ]);
    await card.locator('[data-action-result][data-outcome="ok"]').filter({ hasText: 'capture saved' }).waitFor();
    t.true(capture.packets.every(({ record }) => record?.moduleId === entrance));
    t.deepEqual(opened.cspViolations, []);
    t.deepEqual(opened.pageErrors, []);
  },
);
