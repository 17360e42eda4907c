// npm run perf:soak [-- --cycles 2000 --serial-count 300]
//
// `parkbench soak`'s runner against `parkbench sim` (its own process) on a
// socat pty pair, barrier timings of 0 and memory state: cycles per second,
// and the answer time against `perf:serial`'s figures measured in the same
// run (its own process, after the soak): the bare pty echo, the same pty
// with no box behind it, and the whole MQTT -> gateway -> pty -> box -> MQTT
// round trip. Soak talks to the box on the pty directly (no broker, no
// gateway), so its answer is the bare echo plus the box's own time, and
// lower than the round trip. Targets: at least 150 cycles/s; answer p50
// within 1 ms of perf:serial's bare pty echo (what the runner adds to the
// link and the box is then under a millisecond).
// Then report.html for 100,000 cycles (the run's cycles repeated): its size
// and the time Chromium takes to load it. Targets: under 5 MB, under 2 s.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { systemClock } from '../lib/clock.js';
import { parseProvisioning } from '../lib/provisioning-file.js';
import { parseSerialTarget } from '../lib/serial-target.js';
import { boxUnderTest } from '../conformance/box-under-test.js';
import { SerialBoxTarget } from '../conformance/targets/serial-box-target.js';
import { CycleLog } from '../soak/cycle-log.js';
import { MEASURES } from '../soak/limits.js';
import { parseLimits } from '../soak/limits.js';
import { renderSoakHtml } from '../soak/reports/html.js';
import { buildSoakReport, runSoak, type SoakReport } from '../soak/run-soak.js';
import { CHROMIUM_PATH, chromiumArgs } from '../testkit/chromium.js';
import { startPtyPair } from '../testkit/pty-pair.js';
import { formatNumber, startCli, startTsx } from './support/processes.js';

const cycles = Number(argument('--cycles') ?? 2_000);
const serialCount = Number(argument('--serial-count') ?? 300);
const LIMITS = parseLimits(['failures==0', 'answer_ms.p99<=250']);

console.log(
  `soak benchmark: ${cycles} cycles against parkbench sim on a pty (barrier timings 0); load ${loadavg()
    .map((each) => each.toFixed(2))
    .join(', ')}`,
);
const folder = await mkdtemp(join(tmpdir(), 'pb-perf-soak-'));
try {
  const report = await soakRun(folder);
  const { summary, measurements } = report;
  const answer = measurements.answer_ms;
  console.log(
    `soak: ${summary.cycles} cycles in ${formatNumber(summary.ms / 1000, 2)} s, ${formatNumber(summary.rate, 1)} cycles/s, ${summary.failures} failures; answer p50 ${String(answer.p50)} ms, p99 ${String(answer.p99)} ms; OPEN..CLOSED p50 ${String(measurements.cycle_ms.p50)} ms`,
  );
  const serial = await serialFigures();
  console.log(
    `perf:serial, same run: bare pty echo p50 ${serial.bare} ms; MQTT->gateway->pty->box->MQTT p50 ${serial.round} ms`,
  );
  const p50 = answer.p50 ?? Number.NaN;
  const difference = p50 - serial.bare;
  console.log(
    `soak answer p50 / perf:serial bare pty echo p50: ${formatNumber(p50 / serial.bare, 2)}x (+${formatNumber(difference, 2)} ms: the box deciding and sealing); / its round trip through MQTT and the gateway: ${formatNumber(p50 / serial.round, 2)}x (${formatNumber(p50 - serial.round, 2)} ms)`,
  );
  console.log(
    `target: at least 150 cycles/s: ${summary.rate >= 150 ? 'met' : 'MISSED'} (${formatNumber(summary.rate, 1)})`,
  );
  console.log(
    `target: answer p50 within 1 ms of perf:serial's bare pty echo: ${Math.abs(difference) <= 1 ? 'met' : 'MISSED'} (${formatNumber(difference, 2)} ms)`,
  );
  const page = await pageFigures(report, folder);
  console.log(
    `report.html, 100,000 cycles: ${formatNumber(page.bytes / 1024, 0)} KiB, loaded in Chromium in ${formatNumber(page.loadMs, 0)} ms`,
  );
  console.log(`target: under 5 MB and 2 s: ${page.bytes < 5 * 1024 * 1024 && page.loadMs < 2_000 ? 'met' : 'MISSED'}`);
  console.log(
    `load average at the end: ${loadavg()
      .map((each) => each.toFixed(2))
      .join(', ')}`,
  );
} finally {
  await rm(folder, { recursive: true, force: true });
}
process.exit(0);

async function soakRun(dir: string): Promise<SoakReport> {
  const document = {
    module_id: 9001,
    parking_id: 7,
    direction: 'entrance',
    mac_address: '00:07:80:CF:23:29',
    parking_key: randomBytes(16).toString('hex'),
    parking_key_next: null,
    box_key: randomBytes(16).toString('hex'),
    skew_seconds: 120,
    min_battery_mv: 3300,
    mqtt: { url: 'mqtt://127.0.0.1:1', username: 'box-9001', password: 'pw' },
  };
  const boxPath = join(dir, 'box.json');
  await writeFile(boxPath, JSON.stringify(document));
  const pair = await startPtyPair(await mkdtemp(join(dir, 'pty-')));
  // The battery drains 1 mV a movement: enough for every cycle.
  const sim = startCli([
    'sim',
    '--box',
    boxPath,
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
    String(Math.min(65_000, 3_400 + cycles * 2 + 100)),
    '--log-level',
    'warn',
    '--no-exit-with-parent',
  ]);
  const provisioning = parseProvisioning(document);
  const target = new SerialBoxTarget({
    target: parseSerialTarget(pair.b),
    boxKey: provisioning.boxKey,
    clock: systemClock,
  });
  try {
    await sim.line(/^parkbench sim ready /, 30_000);
    await target.open();
    return await runSoak({
      box: boxUnderTest(provisioning),
      target,
      clock: systemClock,
      settings: { answerMs: 2_000, cycleMs: 2_000, controlSeq: 1_000, keyIdBase: 0x8000_0000, firstAnswerMs: 10_000 },
      stop: { cycles },
      limits: LIMITS,
    });
  } finally {
    await target.close();
    await sim.stop();
    await pair.close();
  }
}

/** perf:serial's p50s, run now in its own process. */
async function serialFigures(): Promise<{ bare: number; round: number }> {
  const child = startTsx(new URL('./serial.ts', import.meta.url), ['--count', String(serialCount)]);
  try {
    const bare = await child.line(/^bare pty echo: +p50 /, 300_000);
    const round = await child.line(/^MQTT->gateway->pty->box->MQTT: p50 /, 300_000);
    return { bare: p50Of(bare), round: p50Of(round) };
  } finally {
    await child.stop();
  }
}

function p50Of(line: string): number {
  const match = /p50 ([\d.,]+) ms/.exec(line);
  return Number((match?.[1] ?? 'NaN').replace(/,/g, ''));
}

/** report.html for 100,000 cycles: the run's own cycles repeated. */
async function pageFigures(report: SoakReport, dir: string): Promise<{ bytes: number; loadMs: number }> {
  const log = new CycleLog();
  const source = report.log;
  for (let index = 0; index < 100_000; index++) {
    const record = source.get(index % source.length);
    const values = Object.fromEntries(MEASURES.map((measure) => [measure, record[measure]]));
    log.push({
      ...values,
      at: report.startedAt + index * 5,
      status: record.status,
      ...(record.failure === undefined ? {} : { failure: record.failure }),
    } as Parameters<CycleLog['push']>[0]);
  }
  const html = renderSoakHtml(
    buildSoakReport({
      target: 'serial',
      moduleId: 9001,
      access: 'sealed',
      log,
      powerCycles: [],
      limits: LIMITS,
      interrupted: false,
      startedAt: report.startedAt,
      ms: 100_000 * 5,
    }),
  );
  const file = join(dir, 'report.html');
  await writeFile(file, html);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs() });
  try {
    const page = await browser.newPage();
    const started = performance.now();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    return { bytes: Buffer.byteLength(html), loadMs: performance.now() - started };
  } finally {
    await browser.close();
  }
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
