// The statistics of one measure over a run (soak/limits.ts names them):
// percentiles by nearest rank over the cycles that measured it, `drop` the
// first value minus the last, in cycle order.
import type { MeasureStatistics } from './limits.js';

/** `values` in cycle order; NaN marks a cycle that did not measure it. */
export function statisticsOf(values: ArrayLike<number>): MeasureStatistics {
  const measured: number[] = [];
  for (let index = 0; index < values.length; index++) {
    const value = values[index] ?? Number.NaN;
    if (!Number.isNaN(value)) measured.push(value);
  }
  if (measured.length === 0)
    return { count: 0, min: null, max: null, p50: null, p95: null, p99: null, mean: null, drop: null };
  const first = measured[0] ?? 0;
  const last = measured[measured.length - 1] ?? 0;
  let sum = 0;
  for (const value of measured) sum += value;
  const sorted = Float64Array.from(measured).sort();
  return {
    count: measured.length,
    min: round(sorted[0] ?? 0),
    max: round(sorted[sorted.length - 1] ?? 0),
    p50: round(nearestRank(sorted, 50)),
    p95: round(nearestRank(sorted, 95)),
    p99: round(nearestRank(sorted, 99)),
    mean: round(sum / measured.length),
    drop: round(first - last),
  };
}

/** Nearest rank: the smallest value with at least p% of the values at or below it. */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? Number.NaN;
}

/** Three decimals: microseconds for times, millivolts and seconds as measured. */
function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
