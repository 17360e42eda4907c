// `npm run screenshots`: the bench page at 1280x800 and 390x844, written to
// docs/img/bench-desktop.png and docs/img/bench-phone.png (the README shows
// the first). It runs what a newcomer runs, as child processes: `parkbench
// start` on a temporary data folder, `parkbench app` for one session
// through both boxes (so the stream, the sessions and the chart have
// something to show); then Debian's chromium (playwright-core) opens the
// `dashboard_url` the ready line gives (/bench#token=...) and shoots.
// In scripts/ rather than perf/: it measures nothing.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { appSessionArgs } from '../lib/app-session-args.js';
import { assertBuilt, binPath as bin } from '../testkit/built-cli.js';
import { CHROMIUM_PATH, chromiumArgs, chromiumInstalled } from '../testkit/chromium.js';
import { freePort } from '../lib/free-port.js';

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
  } finally {
    await browser.close();
  }
} finally {
  bench.kill('SIGTERM');
  await new Promise((resolve) => bench.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
}
