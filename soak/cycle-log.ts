// Every cycle of a run, kept in columns of numbers (a long run on a fast box
// makes millions of cycles: a few typed arrays hold them where as many
// objects would not), and the failed cycles with their reason.
import { MEASURES, type Measure } from './limits.js';

/** One cycle as the report shows it; null where the cycle did not measure it. */
export interface CycleRecord {
  /** 1 for the first. */
  readonly cycle: number;
  /** When its command was sent, ms since the epoch (the run's clock). */
  readonly at: number;
  /** The response's status byte; null when none came. */
  readonly status: number | null;
  /** Command to response, ms. */
  readonly answer_ms: number | null;
  /** Command to the first report of OPEN, ms. */
  readonly open_ms: number | null;
  /** Command to the report of CLOSED after OPEN, ms. */
  readonly cycle_ms: number | null;
  readonly battery_mv: number | null;
  /** box_time minus the true time at the answer, s. */
  readonly drift_s: number | null;
  /** Why the cycle failed; absent when it did not. */
  readonly failure?: string;
}

export interface FailedCycle {
  readonly cycle: number;
  readonly at: number;
  readonly status: number | null;
  readonly reason: string;
}

const NO_STATUS = 0xffff;

export class CycleLog {
  #length = 0;
  #at = new Float64Array(1024);
  #status = new Uint16Array(1024);
  readonly #measures = new Map<Measure, Float64Array>(MEASURES.map((measure) => [measure, new Float64Array(1024)]));
  readonly failures: FailedCycle[] = [];

  get length(): number {
    return this.#length;
  }

  push(record: Omit<CycleRecord, 'cycle'>): void {
    if (this.#length === this.#at.length) this.#grow();
    const index = this.#length++;
    this.#at[index] = record.at;
    this.#status[index] = record.status ?? NO_STATUS;
    for (const measure of MEASURES) this.#column(measure)[index] = record[measure] ?? Number.NaN;
    if (record.failure !== undefined)
      this.failures.push({ cycle: index + 1, at: record.at, status: record.status, reason: record.failure });
  }

  /** A measure's values in cycle order, NaN where a cycle did not measure it (a view: do not keep it past a push). */
  column(measure: Measure): Float64Array {
    return this.#column(measure).subarray(0, this.#length);
  }

  get(index: number): CycleRecord {
    const status = this.#status[index] ?? NO_STATUS;
    const value = (measure: Measure): number | null => {
      const raw = this.#column(measure)[index] ?? Number.NaN;
      return Number.isNaN(raw) ? null : raw;
    };
    const failure = this.#failureOf(index + 1);
    return {
      cycle: index + 1,
      at: this.#at[index] ?? 0,
      status: status === NO_STATUS ? null : status,
      answer_ms: value('answer_ms'),
      open_ms: value('open_ms'),
      cycle_ms: value('cycle_ms'),
      battery_mv: value('battery_mv'),
      drift_s: value('drift_s'),
      ...(failure === undefined ? {} : { failure }),
    };
  }

  *records(): Generator<CycleRecord> {
    for (let index = 0; index < this.#length; index++) yield this.get(index);
  }

  #failureOf(cycle: number): string | undefined {
    // Failures are in cycle order: a binary search.
    let low = 0;
    let high = this.failures.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const failed = this.failures[middle];
      if (failed === undefined) break;
      if (failed.cycle === cycle) return failed.reason;
      if (failed.cycle < cycle) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  #column(measure: Measure): Float64Array {
    const column = this.#measures.get(measure);
    if (column === undefined) throw new Error(`no column ${measure}`);
    return column;
  }

  #grow(): void {
    const size = this.#at.length * 2;
    const grown = <T extends Float64Array | Uint16Array>(old: T, make: (size: number) => T): T => {
      const next = make(size);
      next.set(old);
      return next;
    };
    this.#at = grown(this.#at, (n) => new Float64Array(n));
    this.#status = grown(this.#status, (n) => new Uint16Array(n));
    for (const measure of MEASURES)
      this.#measures.set(
        measure,
        grown(this.#column(measure), (n) => new Float64Array(n)),
      );
  }
}
