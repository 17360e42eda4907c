// `npm run screenshots`: the bench page at 1280x800 and 390x844, written to
// docs/img/bench-desktop.png and docs/img/bench-phone.png (the README shows
// the first). It runs what a newcomer runs, as child processes: `parkbench
// start` on a temporary data folder, `parkbench app` for one session
// through both boxes (so the stream, the sessions and the chart have
// something to show); then Debian's chromium (playwright-core) opens the
// `dashboard_url` the ready line gives (/bench#token=...) and shoots.
// docs/img/bench-runs.png: the entrance box's kept runs, two conformance
// runs started from the page, the second with the box jammed (its
// regressions compared against the first) and a case's trend.
// Then docs/img/soak-report.png: a real `parkbench soak` of 1,000 cycles
// against `parkbench sim` on a socat pty pair (a jam every 250 openings, so
// failures show), its --report DIR's report.html shot whole.
// `npm run screenshots -- soak` takes that one alone.
// In scripts/ rather than perf/: it measures nothing.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { appSessionArgs } from '../lib/app-session-args.js';
import { assertBuilt, binPath as bin } from '../testkit/built-cli.js';
import { CHROMIUM_PATH, chromiumArgs, chromiumInstalled } from '../testkit/chromium.js';
import { freePort } from '../lib/free-port.js';
import { startPtyPair } from '../testkit/pty-pair.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const images = join(root, 'docs', 'img');

interface Ready {
  api_url: string;
  dashboard_url: string;
  mqtt_url: string;
  client_app_id: string;
  client_secret: string;
  driver: { email: string; password: string };
  parking_id: number;
  boxes: { module_id: number }[];
  mqtt_operator: { username: string; password: string };
}

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, ...args], (error, stdout, stderr) => {
      if (error) reject(new Error(`parkbench ${args.slice(0, 3).join(' ')} failed: ${stderr}`));
      else resolve(stdout);
    });
  });
}

// The compiled parkbench, built from the sources as they are.
assertBuilt();
if (!chromiumInstalled()) {
  process.stderr.write(`screenshots: chromium is not at ${CHROMIUM_PATH}: apt-get install chromium\n`);
  process.exit(1);
}

if (!process.argv.slice(2).includes('soak')) await benchScreenshots();
await soakScreenshot();

async function benchScreenshots(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pb-screenshots-'));
  const port = await freePort();
  const mqttPort = await freePort();
  const bench = spawn(
    process.execPath,
    [bin, 'start', '--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)],
    { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      createInterface({ input: bench.stdout }).on('line', (line) => {
        if (line.startsWith('parkbench ready ')) resolve(JSON.parse(line.slice('parkbench ready '.length)) as Ready);
      });
      bench.once('exit', (code) => reject(new Error(`parkbench start exited (${String(code)})`)));
    });
    // One session through the entrance and the exit box, as `parkbench app` plays it.
    await run(appSessionArgs(ready));
    await mkdir(images, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs() });
    try {
      for (const [name, viewport] of [
        ['bench-desktop.png', { width: 1280, height: 800 }],
        ['bench-phone.png', { width: 390, height: 844 }],
      ] as const) {
        const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
        const page = await context.newPage();
        await page.goto(ready.dashboard_url);
        for (const box of ready.boxes) await page.locator(`[data-module-id="${box.module_id}"]`).waitFor();
        await page.locator('[data-box-log-id]').first().waitFor();
        // The barrier's CSS transition and the chart's first draw.
        await page.waitForTimeout(1500);
        await page.screenshot({ path: join(images, name) });
        process.stdout.write(`wrote docs/img/${name} (${viewport.width}x${viewport.height})\n`);
        await context.close();
      }
      await runsScreenshot(browser, ready);
    } finally {
      await browser.close();
    }
  } finally {
    bench.kill('SIGTERM');
    await new Promise((resolve) => bench.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Two conformance runs of the entrance box from the page, healthy then jammed, compared, and a case's trend. */
async function runsScreenshot(browser: Browser, ready: Ready): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(ready.dashboard_url);
  const card = page.locator(`[data-module-id="${ready.boxes[0]?.module_id ?? 0}"]`);
  for (const jammed of [false, true]) {
    if (jammed) await card.locator('[data-action="fault-jam"]').click();
    await card.locator('[data-action="conformance"]:not([disabled])').click();
    await page.locator('[data-conformance-run][data-state="running"]').waitFor();
    // A jammed box's cases wait out --cycle-ms: some 40 s.
    await page.locator('[data-conformance-run][data-state="running"]').waitFor({ state: 'detached', timeout: 180_000 });
  }
  await card.locator('[data-action="fault-clear"]').click();
  await card.locator('[data-action="runs"]').click();
  const rows = page.locator('[data-runs] [data-run-id]');
  await rows.nth(1).locator('[data-action="pick-a"]').click();
  await rows.nth(0).locator('[data-action="pick-b"]').click();
  await page.locator('[data-action="compare"]').click();
  await page.locator('[data-compare] [data-counts]').waitFor();
  await page.locator('[data-action="trend"]').click();
  await page.locator('[data-trend] canvas').waitFor();
  await page.waitForTimeout(500);
  await page.locator('[data-runs]').screenshot({ path: join(images, 'bench-runs.png') });
  process.stdout.write('wrote docs/img/bench-runs.png\n');
  await context.close();
}

/** A real soak run's report.html, whole page, at 1000 px wide. */
async function soakScreenshot(): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'pb-screenshots-soak-'));
  const pair = await startPtyPair(folder);
  const boxFile = join(folder, 'box-9101.json');
  await writeFile(
    boxFile,
    JSON.stringify({
      module_id: 9101,
      parking_id: 7,
      direction: 'entrance',
      mac_address: '02:50:42:00:23:8D',
      parking_key: randomBytes(16).toString('hex'),
      parking_key_next: null,
      box_key: randomBytes(16).toString('hex'),
      skew_seconds: 120,
      min_battery_mv: 3300,
      mqtt: { url: 'mqtt://127.0.0.1:1', username: 'box-9101', password: 'pw' },
    }),
  );
  const sim = spawn(
    process.execPath,
    [
      bin,
      'sim',
      '--box',
      boxFile,
      '--serial',
      pair.a,
      '--memory-state',
      '--opening-ms',
      '0',
      '--open-hold-ms',
      '0',
      '--closing-ms',
      '0',
      '--battery-mv',
      '5500',
      '--jam-every',
      '250',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: sim.stdout }).on('line', (line) => {
        if (line.startsWith('parkbench sim ready ')) resolve();
      });
      sim.once('exit', (code) => reject(new Error(`parkbench sim exited (${String(code)})`)));
    });
    const report = join(folder, 'report');
    // The run fails failures<=2 (4 jams): exit 1 is expected, the report is what matters.
    await run([
      'soak',
      '--box',
      boxFile,
      '--serial',
      pair.b,
      '--cycles',
      '1000',
      '--limit',
      'failures<=2',
      '--limit',
      'answer_ms.p99<=250',
      '--limit',
      'battery_mv.min>=3300',
      '--report',
      report,
    ]).catch(() => undefined);
    await mkdir(images, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs() });
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 800 }, deviceScaleFactor: 1 });
      await page.goto(pathToFileURL(join(report, 'report.html')).href);
      await page.screenshot({ path: join(images, 'soak-report.png'), fullPage: true });
      process.stdout.write('wrote docs/img/soak-report.png (a real run of 1,000 cycles)\n');
    } finally {
      await browser.close();
    }
  } finally {
    sim.kill('SIGTERM');
    await new Promise((resolve) => sim.once('exit', resolve));
    await pair.close();
    await rm(folder, { recursive: true, force: true });
  }
}
