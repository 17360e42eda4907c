// `npm run perf:start-bench`: what a test file pays for its bench:
// parkbench/testing's startBench() until it resolves (the API listening, its
// broker, the demo data made on a fresh SQLite file, the two simulated boxes
// online), then stop() (everything closed, the temporary folder removed),
// in this process. Target: at most 1.5 s for both.
//
// Baseline, in the same rounds: a bare createService on a fresh SQLite file
// (the API alone, its database migrated; no broker, no demo data, no boxes),
// listening on a free port, then closed and its folder removed. The two take
// turns, one uncounted round of each first (shown: what the first bench of a
// test file pays); the verdict is each one's median.
//
//   PERF_ROUNDS (default 10) counted rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { configWith } from '../api/config/index.js';
import { createService } from '../api/service.js';
import { startBench } from '../testing/index.js';

const ROUNDS = Number(process.env.PERF_ROUNDS ?? 10);
const TARGET_MS = 1_500;

interface BenchRound {
  readyMs: number;
  stopMs: number;
}

async function benchRound(): Promise<BenchRound> {
  const started = performance.now();
  const bench = await startBench();
  const ready = performance.now();
  await bench.stop();
  return { readyMs: ready - started, stopMs: performance.now() - ready };
}

/** createService, listening, closed: the API's own start and stop. */
async function baselineRound(): Promise<number> {
  const started = performance.now();
  const folder = mkdtempSync(join(tmpdir(), 'parkbench-perf-service-'));
  const service = await createService(configWith({ databasePath: join(folder, 'parkbench.sqlite') }));
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  await service.close();
  rmSync(folder, { recursive: true, force: true });
  return performance.now() - started;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const ms = (value: number): string => `${Math.round(value)} ms`;

console.log(`perf:start-bench: ${ROUNDS} rounds after one uncounted; load average ${loadavg()[0]?.toFixed(1) ?? '?'}`);
// The first of each in this process pays what a test file's first bench
// pays (the code warming up): shown, not counted.
const first = await benchRound();
const firstBaseline = await baselineRound();
console.log(
  `first in this process (uncounted): startBench ${ms(first.readyMs)} + stop ${ms(first.stopMs)}; bare createService ${ms(firstBaseline)}`,
);
const benches: BenchRound[] = [];
const baselines: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const bench = await benchRound();
  const baseline = await baselineRound();
  benches.push(bench);
  baselines.push(baseline);
  console.log(
    `round ${round}: startBench ${ms(bench.readyMs)} + stop ${ms(bench.stopMs)} = ${ms(bench.readyMs + bench.stopMs)}; bare createService ${ms(baseline)}`,
  );
}
const total = median(benches.map((round) => round.readyMs + round.stopMs));
const baseline = median(baselines);
console.log(
  [
    '',
    `startBench() until ready: median ${ms(median(benches.map((round) => round.readyMs)))}`,
    `stop(): median ${ms(median(benches.map((round) => round.stopMs)))}`,
    `startBench() + stop(): median ${ms(total)} (target ${ms(TARGET_MS)}: ${total <= TARGET_MS ? 'met' : 'NOT met'})`,
    `bare createService, listening, closed: median ${ms(baseline)}`,
    `ratio: ${(total / baseline).toFixed(2)}x the bare service; load average now ${loadavg()[0]?.toFixed(1) ?? '?'}`,
  ].join('\n'),
);
