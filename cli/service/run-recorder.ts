// A run recorded into a running service while it runs (`--record`): the
// run posted before its first case, its results queued as they end and
// sent in the background, in order, several in one call when they end
// together, and its end posted once they are all in. A slow service never
// holds the run up: results wait in the queue, and the end waits for the
// queue. A service that cannot be reached, or fails midway, is one line on
// stderr and the run goes on unrecorded; a box reserved by someone else at
// the start is a CliError, exit 3, before anything else happens. A run
// that has posted nothing for an hour (a long soak between its start and
// its end) says it is still going with an empty post, so the service never
// takes it for dead (it ends a command-line run quiet for 24 h).
import { systemClock, unrefTimer, type Clock, type TimerHandle } from '../../lib/clock.js';
import { CliError, ExitCode } from '../errors.js';
import { messageOf } from '../../lib/message-of.js';
import { OperatorClient, reservedLine, ServiceRefused, ServiceUnreachable } from './client.js';
import type { RecordSettings } from './record-flags.js';

/** What `--json` says of the recording. */
export interface RecordOutcome {
  readonly recorded: boolean;
  readonly run_id: string | null;
  /** The run in the operator API (GET it with the operator's token). */
  readonly url: string | null;
  readonly error: string | null;
}

export interface RecordedRunStart {
  readonly module_id: number;
  readonly kind: 'conformance' | 'soak';
  readonly target: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly options: Readonly<Record<string, unknown>>;
}

export interface RunResultInput {
  readonly name: string;
  readonly result: 'pass' | 'fail' | 'skip';
  readonly reason: string | null;
  readonly ms: number;
  readonly value?: number | null;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface RecordedRunEnd {
  readonly state: 'passed' | 'failed' | 'error';
  readonly summary?: Readonly<Record<string, unknown>>;
  readonly report?: unknown;
  readonly error?: string;
  readonly captures?: readonly string[];
}

/** The most results one call carries (the service takes 0 to 500). */
const BATCH = 500;

/** How long a recording run may go without a post before it says it is
 * still going: well inside the service's 24 h bound for a quiet run. */
export const KEEP_ALIVE_MS = 3_600_000;

export class RunRecorder {
  private readonly pending: RunResultInput[] = [];
  private sending: Promise<void> | undefined;
  private failure: string | undefined;
  private keepAlive: TimerHandle | undefined;
  /** Whether a call went out since the keep-alive timer was last set. */
  private posted = false;

  private constructor(
    private readonly client: OperatorClient | undefined,
    private readonly runId: string | undefined,
    /** `parkbench conformance`, for the line that says the run is not recorded. */
    private readonly command: string,
    private readonly clock: Clock,
    failure?: string,
  ) {
    if (failure !== undefined) this.fail(failure);
    else if (client !== undefined && runId !== undefined) this.armKeepAlive();
  }

  /** Posts the run. A 409 box_reserved is a CliError (exit 3); any other
   * failure leaves a recorder that records nothing and has said why. */
  static async start(
    settings: RecordSettings,
    run: RecordedRunStart,
    command: string,
    clock: Clock = systemClock,
  ): Promise<RunRecorder> {
    const client = new OperatorClient(settings.service);
    try {
      const created = await client.call<{ id?: unknown }>('POST', '/api/operator/runs', {
        ...run,
        source: settings.source,
      });
      if (typeof created.id !== 'string')
        return new RunRecorder(undefined, undefined, command, clock, 'the service answered without a run id');
      return new RunRecorder(client, created.id, command, clock);
    } catch (error) {
      if (error instanceof ServiceRefused && error.code === 'box_reserved')
        throw new CliError(reservedLine(run.module_id, error), ExitCode.boxReserved);
      return new RunRecorder(undefined, undefined, command, clock, failureOf(error));
    }
  }

  /** Queues results of the run, sent in the background in the order given. */
  add(...results: RunResultInput[]): void {
    if (this.failure !== undefined || this.runId === undefined) return;
    this.pending.push(...results);
    this.pump();
  }

  /** Sends what is queued, then the end; what the run's report says of it. */
  async end(end: RecordedRunEnd): Promise<RecordOutcome> {
    this.stopKeepAlive();
    while (this.sending !== undefined) await this.sending;
    if (this.client !== undefined && this.runId !== undefined) {
      const path = `/api/operator/runs/${encodeURIComponent(this.runId)}/end`;
      if (this.failure === undefined) {
        await this.client.call('POST', path, end).catch((error: unknown) => this.fail(failureOf(error)));
      } else {
        // Its results are missing: the run is ended as an error rather than left running.
        const error = `not recorded whole: ${this.failure}`;
        await this.client.call('POST', path, { ...end, state: 'error', error }).catch(() => undefined);
      }
    }
    return {
      recorded: this.failure === undefined,
      run_id: this.runId ?? null,
      url:
        this.runId === undefined || this.client === undefined
          ? null
          : `${this.client.settings.url}/api/operator/runs/${encodeURIComponent(this.runId)}`,
      error: this.failure ?? null,
    };
  }

  private pump(): void {
    if (this.sending !== undefined || this.failure !== undefined || this.pending.length === 0) return;
    this.send(this.pending.splice(0, BATCH));
  }

  /** Posts `batch` (empty: the run is still going); no call is under way. */
  private send(batch: RunResultInput[]): void {
    const { client, runId } = this;
    if (client === undefined || runId === undefined) return;
    this.posted = true;
    this.sending = client
      .call('POST', `/api/operator/runs/${encodeURIComponent(runId)}/results`, { results: batch })
      .then(
        () => undefined,
        (error: unknown) => this.fail(failureOf(error)),
      )
      .finally(() => {
        this.sending = undefined;
        this.pump();
      });
  }

  private armKeepAlive(): void {
    this.posted = false;
    this.keepAlive = this.clock.setTimeout(() => {
      this.keepAlive = undefined;
      if (this.failure !== undefined) return;
      if (!this.posted && this.sending === undefined) this.send([]);
      this.armKeepAlive();
    }, KEEP_ALIVE_MS);
    // The run's own work keeps the process alive, not this timer.
    unrefTimer(this.keepAlive);
  }

  private stopKeepAlive(): void {
    if (this.keepAlive !== undefined) this.clock.clearTimeout(this.keepAlive);
    this.keepAlive = undefined;
  }

  private fail(message: string): void {
    if (this.failure !== undefined) return;
    this.failure = message;
    this.stopKeepAlive();
    this.pending.length = 0;
    process.stderr.write(`${this.command}: not recorded: ${message}\n`);
  }
}

function failureOf(error: unknown): string {
  if (error instanceof ServiceRefused || error instanceof ServiceUnreachable) return error.message;
  return messageOf(error);
}
