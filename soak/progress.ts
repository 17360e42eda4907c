// Progress on stderr while a run lasts: on a terminal, one bar redrawn in
// place (cycles, rate, failures, time left); elsewhere (CI, a pipe) a quiet
// line now and then. The rate and the time left come from the injected clock.
import type { Clock } from '../lib/clock.js';
import type { SoakProgress, SoakStop } from './run-soak.js';

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Between two redraws of the bar, ms. */
const REDRAW_MS = 100;
/** Between two quiet lines, ms. */
export const QUIET_LINE_MS = 10_000;
const BAR_WIDTH = 24;

export class ProgressDisplay {
  #last: SoakProgress = { cycles: 0, failures: 0, elapsedMs: 0 };
  #shownAt: number | undefined;
  #drawn = false;

  constructor(
    private readonly stream: ProgressStream,
    private readonly clock: Clock,
    private readonly stop: SoakStop,
    private readonly quietEveryMs = QUIET_LINE_MS,
  ) {}

  update(progress: SoakProgress): void {
    this.#last = progress;
    const now = this.clock.now();
    const every = this.stream.isTTY === true ? REDRAW_MS : this.quietEveryMs;
    if (this.#shownAt !== undefined && now - this.#shownAt < every) return;
    this.#shownAt = now;
    this.#show();
  }

  /** The last figures, and the bar's line ended. */
  finish(): void {
    this.#show();
    if (this.stream.isTTY === true && this.#drawn) this.stream.write('\n');
  }

  #show(): void {
    const text = describeProgress(this.#last, this.stop);
    if (this.stream.isTTY === true) {
      const width = Math.max(20, (this.stream.columns ?? 80) - 1);
      const line = `${bar(fraction(this.#last, this.stop))} ${text}`.slice(0, width);
      this.stream.write(`\r${line.padEnd(width)}`);
      this.#drawn = true;
    } else {
      this.stream.write(`soak: ${text}\n`);
    }
  }
}

/** `1234/5000 cycles, 152.3/s, 0 failures, 0:25 left`. */
export function describeProgress(progress: SoakProgress, stop: SoakStop): string {
  const rate = progress.elapsedMs > 0 ? (progress.cycles * 1000) / progress.elapsedMs : 0;
  const of = stop.cycles === undefined ? '' : `/${stop.cycles}`;
  const left = timeLeftMs(progress, stop, rate);
  const parts = [
    `${progress.cycles}${of} cycles`,
    `${rate.toFixed(1)}/s`,
    `${progress.failures} ${progress.failures === 1 ? 'failure' : 'failures'}`,
  ];
  if (left !== undefined) parts.push(`${clockTime(left)} left`);
  return parts.join(', ');
}

function timeLeftMs(progress: SoakProgress, stop: SoakStop, rate: number): number | undefined {
  const byDuration = stop.durationMs === undefined ? undefined : Math.max(0, stop.durationMs - progress.elapsedMs);
  const byCycles =
    stop.cycles === undefined || rate === 0 ? undefined : (Math.max(0, stop.cycles - progress.cycles) * 1000) / rate;
  if (byDuration === undefined) return byCycles;
  if (byCycles === undefined) return byDuration;
  return Math.min(byDuration, byCycles);
}

function fraction(progress: SoakProgress, stop: SoakStop): number {
  const byCycles = stop.cycles === undefined ? 0 : progress.cycles / stop.cycles;
  const byDuration = stop.durationMs === undefined ? 0 : progress.elapsedMs / stop.durationMs;
  return Math.min(1, Math.max(byCycles, byDuration));
}

function bar(done: number): string {
  const filled = Math.round(done * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
}

/** h:mm:ss, or m:ss under an hour. */
export function clockTime(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
