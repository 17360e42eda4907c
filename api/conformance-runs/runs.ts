// Conformance runs started from the operator API: the suite of conformance/
// against one box, through the API's broker (MQTT target), reported as the
// CLI reports it. One run per box at a time, in every process: a run holds
// its box (run-hold.ts) from its start to its end, so the control
// dispatcher and the operator's control commands leave it alone, and its
// put-back of the issuer keys is queued durably before the suite touches
// them. Each run is also kept in the database as it goes (api/runs/: its
// start, each case as it ends, its end with its summary and report), so it
// outlives the process: `get` and `ended` read a run this process does not
// have (another process's, or one from before a restart) from there. The
// runs of this process stay in its memory too (the newest
// RUNS_KEPT_PER_BOX per box), for what is running now.
//
// A run is stopped by an operator's cancel, by the API stopping, or by the
// loss of its hold: the suite's signal, as SIGINT on the command line. Its
// waits end at once; the put-back is still sent, and waited for at most
// PUT_BACK_AFTER_STOP_MS, so a silent box cannot hold the API's shutdown
// back. What it could not confirm stays queued, and goes out once the box
// is free.
import { randomBytes } from 'node:crypto';
import type { BoxUnderTest } from '../../conformance/box-under-test.js';
import type { CaseResult, SuiteReport } from '../../conformance/case-result.js';
import type { ProtocolVersion } from '../../conformance/cases/index.js';
import { runSuite } from '../../conformance/run-suite.js';
import {
  DEFAULT_ANSWER_MS,
  DEFAULT_CYCLE_MS,
  DEFAULT_WAIT_MS,
  freshKeyIdBase,
} from '../../conformance/suite-defaults.js';
import { MqttBoxTarget } from '../../conformance/targets/mqtt-box-target.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import { Topics } from '../../lib/mqtt-topics.js';
import type { TimerHandle } from '../../lib/clock.js';
import { RESTORE_CASE_NAME } from '../../conformance/restore-issuers.js';
import type { ApiConfig } from '../config/index.js';
import type { Store } from '../db/store.js';
import type { Runs, RunSource, RunState, RunWithResults } from '../runs/index.js';
import { conflict, notFound, refused } from '../http/domain-error.js';
import type { MqttService } from '../mqtt/index.js';
import { HoldLease, holdBox, releaseBox, type PutBack } from './run-hold.js';
import { caseView, summaryView, type ConformanceRunView } from './run-view.js';
import { numberOr, suiteReportOf } from './run-junit.js';
import { heldRevocationsOf } from './held-revocations.js';
import { boxUnderTestOf } from './suite-box.js';
import { SuiteLogins } from './suite-login.js';

/** Runs kept per box, newest first; a running one is the newest, so it is never dropped. */
export const RUNS_KEPT_PER_BOX = 10;

/** How long a stopped run waits for the answer to its put-back, ms (injected clock). */
export const PUT_BACK_AFTER_STOP_MS = 2_000;

/** The command line's defaults (`parkbench conformance` without flags). */
export const RUN_DEFAULTS = {
  skipWearing: false,
  protocol: 2,
  answerMs: DEFAULT_ANSWER_MS,
  cycleMs: DEFAULT_CYCLE_MS,
} as const satisfies RunOptions;

export interface RunOptions {
  readonly skipWearing: boolean;
  readonly protocol: ProtocolVersion;
  readonly answerMs: number;
  readonly cycleMs: number;
}

/** What a run needs of the running MQTT service: its URL, and whether the box is offline. */
export type RunBroker = Pick<MqttService, 'url' | 'availabilityOf'>;

export interface ConformanceRunsDeps {
  /** The store: the box under test, its control sequences, the runs' MQTT operator account (suite-login.ts). */
  store: Store;
  clock: Clock;
  config: Pick<ApiConfig, 'mqttUrl' | 'mqttUsername' | 'mqttPassword' | 'mqttTopicPrefix' | 'conformanceHoldMs'>;
  logger: Logger;
  /** Called with the run's new state when it starts, as each case ends, and when it ends
   * (the bench page's event stream). A listener that throws is logged, never fails the run. */
  onChange?: (run: ConformanceRunView) => void;
  /** Where each run is kept (api/runs/). */
  runs: Pick<Runs, 'start' | 'addResults' | 'end' | 'get' | 'withReport' | 'endOrphans'>;
}

/** Who started a run and how, as it is kept. */
export interface RunOrigin {
  /** page: the bench page; api: another client of the operator API. */
  readonly source: Extract<RunSource, 'page' | 'api'>;
  /** The operator's name. */
  readonly startedBy: string;
  readonly labels: Readonly<Record<string, string>>;
}

interface Run {
  readonly id: string;
  readonly moduleId: number;
  readonly options: RunOptions;
  readonly startedMs: number;
  readonly firstControlSeq: number;
  /** The queued put-back of the issuer keys (control_commands.id); null for protocol 1. */
  readonly restoreId: number | null;
  readonly results: CaseResult[];
  /** Stops the cases (their waits end at once). */
  readonly abort: AbortController;
  /** Ends the wait for the put-back's answer, PUT_BACK_AFTER_STOP_MS after `abort`. */
  readonly putBackAbort: AbortController;
  /** Why it was stopped (its error then), once it was. */
  stoppedBecause: string | null;
  putBackTimer: TimerHandle | undefined;
  state: RunState;
  endedMs: number | null;
  error: string | null;
  report: SuiteReport | undefined;
  /** The writes of its cases to the database, in order (each waits for the one before). */
  writes: Promise<void>;
}

/** How the suite's own put-back went: passed or not, or never needed; a
 * suite that started and left no report may have touched the keys. */
function putBackOf(report: SuiteReport | undefined, suiteStarted: boolean): PutBack {
  if (report === undefined) return suiteStarted ? 'unsure' : 'untouched';
  const putBack = report.results.find((result) => result.name === RESTORE_CASE_NAME);
  if (putBack === undefined) return 'untouched';
  return putBack.result === 'pass' ? 'passed' : 'unsure';
}

/** A run that has ended, for its files; `report` undefined when the suite never ran (an error). */
export interface EndedRun {
  readonly run: ConformanceRunView;
  readonly report: SuiteReport | undefined;
}

export class ConformanceRuns {
  readonly #runs = new Map<string, Run>();
  /** Run ids by box, oldest first. */
  readonly #byBox = new Map<number, string[]>();
  readonly #running = new Map<number, Promise<void>>();
  readonly #starting = new Set<number>();
  readonly #logins: SuiteLogins;

  constructor(private readonly deps: ConformanceRunsDeps) {
    this.#logins = new SuiteLogins(deps);
  }

  /** Starts a run against the box; refuses (DomainError) an unknown box, a box
   * under a run already (this process's or another's), and a box its broker
   * says is offline. `requestedBy`: who asks (the put-back's requested_by). */
  async start(
    moduleId: number,
    options: RunOptions,
    broker: RunBroker,
    origin: RunOrigin,
    requestedBy = 'the operator API',
  ): Promise<ConformanceRunView> {
    const current = this.#byBox.get(moduleId)?.find((id) => this.#runs.get(id)?.state === 'running');
    if (current !== undefined) throw conflict(`box ${moduleId} is under conformance run ${current}: one at a time`);
    // Its reads and reservation are awaited: a second start meanwhile is refused as the run's.
    if (this.#starting.has(moduleId)) throw conflict(`box ${moduleId} is starting a conformance run: one at a time`);
    this.#starting.add(moduleId);
    try {
      return await this.#start(moduleId, options, broker, origin, requestedBy);
    } finally {
      this.#starting.delete(moduleId);
    }
  }

  async #start(
    moduleId: number,
    options: RunOptions,
    broker: RunBroker,
    origin: RunOrigin,
    requestedBy: string,
  ): Promise<ConformanceRunView> {
    const { store, clock, config, logger } = this.deps;
    const availability = broker.availabilityOf(moduleId);
    if (availability.availability === 'offline') {
      // An unknown box is a 404 before it is offline.
      await boxUnderTestOf(store, moduleId);
      throw refused(`box ${moduleId} is offline (${availability.reason ?? 'no reason given'}): no case could pass`);
    }
    const id = randomBytes(9).toString('base64url');
    const held = await holdBox(store, {
      moduleId,
      runId: id,
      protocol: options.protocol,
      requestedBy,
      nowMs: clock.now(),
      leaseMs: config.conformanceHoldMs,
    });
    const run: Run = {
      id,
      moduleId,
      options,
      startedMs: clock.now(),
      firstControlSeq: held.firstControlSeq,
      restoreId: held.restoreId,
      results: [],
      abort: new AbortController(),
      putBackAbort: new AbortController(),
      stoppedBecause: null,
      putBackTimer: undefined,
      state: 'running',
      endedMs: null,
      error: null,
      report: undefined,
      writes: Promise.resolve(),
    };
    try {
      await this.#record(run, origin);
    } catch (error) {
      await this.#release(run, 'untouched');
      throw error;
    }
    const lease = new HoldLease({
      store,
      clock,
      logger,
      moduleId,
      runId: id,
      leaseMs: config.conformanceHoldMs,
      onLost: () =>
        this.#stop(
          run,
          'interrupted: the run lost its hold on the box (its lease passed before it was renewed), so another command may have reached the box',
        ),
    });
    lease.start();
    this.#keep(run);
    logger.info({ run_id: run.id, module_id: moduleId }, 'conformance run started');
    this.#changed(run);
    const done = this.#execute(run, held.box, broker.url, lease).finally(() => this.#running.delete(moduleId));
    this.#running.set(moduleId, done);
    return this.#view(run);
  }

  /** The run: this process's, else the one kept in the database; undefined when there is none of that id. */
  async get(runId: string): Promise<ConformanceRunView | undefined> {
    const run = this.#runs.get(runId);
    if (run !== undefined) return this.#view(run);
    const kept = await this.deps.runs.get(runId);
    return kept?.kind === 'conformance' ? keptView(kept) : undefined;
  }

  /** The run's report for its JUnit and JSON: a run still going is refused. */
  async ended(runId: string): Promise<EndedRun> {
    const run = this.#runs.get(runId);
    if (run === undefined) return this.#endedKept(runId);
    if (run.state === 'running') throw refused(`conformance run ${runId} has not ended: its files come at the end`);
    return { run: this.#view(run), report: run.report };
  }

  /** A run this process does not have, from the database. */
  async #endedKept(runId: string): Promise<EndedRun> {
    const kept = await this.deps.runs.get(runId);
    if (kept?.kind !== 'conformance') throw notFound(`no conformance run ${runId}`);
    if (kept.state === 'running') throw refused(`conformance run ${runId} has not ended: its files come at the end`);
    const { report } = await this.deps.runs.withReport(runId);
    return { run: keptView(kept), report: report === null ? undefined : suiteReportOf(kept, report) };
  }

  /** Keeps the run in the database, as started; a run its box's earlier
   * process left running (its hold passed: this one holds the box now) is ended first. */
  async #record(run: Run, origin: RunOrigin): Promise<void> {
    const { runs } = this.deps;
    await runs.endOrphans(run.startedMs, run.moduleId);
    await runs.start({
      id: run.id,
      moduleId: run.moduleId,
      kind: 'conformance',
      source: origin.source,
      startedBy: origin.startedBy,
      target: 'mqtt',
      labels: origin.labels,
      options: optionsView(run.options),
      startedMs: run.startedMs,
    });
  }

  /** Queues the write of a case that ended, after the ones before it. */
  #recordResult(run: Run, result: CaseResult): void {
    const view = caseView(result);
    run.writes = run.writes.then(async () => {
      try {
        await this.deps.runs.addResults(run.id, [
          {
            name: view.name,
            result: view.result,
            reason: view.reason,
            ms: view.ms,
            value: null,
            details: { step: view.step, expected: view.expected, got: view.got, wearing: view.wearing },
          },
        ]);
      } catch (error) {
        this.deps.logger.warn(
          { run_id: run.id, err: messageOf(error) },
          'could not keep a case of the conformance run',
        );
      }
    });
  }

  /** Writes the run's end (after its cases): its summary, and its report (what its files are rendered from). */
  async #recordEnd(run: Run): Promise<void> {
    await run.writes;
    const view = this.#view(run);
    try {
      await this.deps.runs.end(run.id, {
        state: run.state === 'running' ? 'error' : run.state,
        error: run.error,
        summary: view.summary,
        report: run.report,
        captures: undefined,
      });
    } catch (error) {
      this.deps.logger.warn({ run_id: run.id, err: messageOf(error) }, 'could not keep the end of the conformance run');
    }
  }

  /** Stops a running run (an operator's cancel): refuses (DomainError) a run
   * this process does not have for that box, and one that has ended. The run
   * ends soon after: its waits end at once, its put-back waits at most
   * PUT_BACK_AFTER_STOP_MS. */
  cancel(runId: string, moduleId: number, by: string): ConformanceRunView {
    const run = this.#runs.get(runId);
    if (run?.moduleId !== moduleId)
      throw notFound(`no conformance run ${runId} of box ${moduleId} in this API process`);
    if (run.state !== 'running') throw conflict(`conformance run ${runId} has ended (${run.state}): nothing to cancel`);
    this.#stop(run, `cancelled by ${by}`);
    return this.#view(run);
  }

  /** Stops every run and waits for each to end (its put-back tried, its hold released). */
  async close(): Promise<void> {
    for (const run of this.#runs.values()) if (run.state === 'running') this.#stop(run, 'interrupted: the API stopped');
    await Promise.allSettled(this.#running.values());
  }

  /** Stops the run once: its cases at once, the wait for its put-back a little later. */
  #stop(run: Run, because: string): void {
    if (run.stoppedBecause !== null) return;
    run.stoppedBecause = because;
    this.deps.logger.info({ run_id: run.id, module_id: run.moduleId, because }, 'conformance run stopping');
    run.abort.abort();
    run.putBackTimer = this.deps.clock.setTimeout(() => run.putBackAbort.abort(), PUT_BACK_AFTER_STOP_MS);
  }

  async #execute(run: Run, box: BoxUnderTest, brokerUrl: string, lease: HoldLease): Promise<void> {
    const { clock, config } = this.deps;
    let target: MqttBoxTarget | undefined;
    let suiteStarted = false;
    // Shown once the box is released: a run seen ended has left its box free.
    let state: RunState;
    let error: string | null = null;
    try {
      const login = await this.#logins.loginFor(brokerUrl);
      target = new MqttBoxTarget({
        url: login.url,
        moduleId: run.moduleId,
        topics: new Topics(config.mqttTopicPrefix),
        clock,
        ...(login.username === undefined ? {} : { username: login.username }),
        ...(login.password === undefined ? {} : { password: login.password }),
      });
      try {
        await target.open();
      } catch (error) {
        throw new Error(`cannot reach the box through the broker ${login.url}: ${messageOf(error)}`, {
          cause: error,
        });
      }
      // What the service sent the box counts in its revocation list's capacity.
      const heldRevocations = await heldRevocationsOf(this.deps.store, run.moduleId);
      suiteStarted = true;
      const report = await runSuite({
        box,
        target,
        clock,
        settings: {
          answerMs: run.options.answerMs,
          cycleMs: run.options.cycleMs,
          controlSeq: run.firstControlSeq,
          keyIdBase: freshKeyIdBase(),
          // A box that answers slowly (answer_ms) gets as long as one case would give it.
          firstAnswerMs: Math.max(DEFAULT_WAIT_MS, 2 * run.options.answerMs),
          heldRevocations,
        },
        skipWearing: run.options.skipWearing,
        protocol: run.options.protocol,
        onResult: (result) => {
          run.results.push(result);
          this.#recordResult(run, result);
          this.#changed(run);
        },
        signal: run.abort.signal,
        putBackSignal: run.putBackAbort.signal,
      });
      run.report = report;
      if (report.interrupted === true) {
        state = 'error';
        error = `${run.stoppedBecause ?? 'interrupted'}; the cases after the last one shown did not run`;
      } else state = report.summary.failed === 0 ? 'passed' : 'failed';
    } catch (failure) {
      state = 'error';
      error = messageOf(failure);
    } finally {
      await target?.close().catch(() => undefined);
    }
    lease.stop();
    await this.#release(run, putBackOf(run.report, suiteStarted));
    if (run.putBackTimer !== undefined) clock.clearTimeout(run.putBackTimer);
    run.state = state;
    run.error = error;
    run.endedMs = clock.now();
    await this.#recordEnd(run);
    this.deps.logger.info(
      { run_id: run.id, module_id: run.moduleId, state: run.state, error: run.error ?? undefined },
      'conformance run ended',
    );
    this.#changed(run);
  }

  /** Ends the run's hold: the box's sequence past the run's, its queued
   * put-back done or left pending, the box free. A database that refuses
   * leaves the lease to pass, and the put-back pending, which then goes out
   * (a second put-back of the same keys does no harm). */
  async #release(run: Run, putBack: PutBack): Promise<void> {
    const { store, clock, logger } = this.deps;
    try {
      await releaseBox(store, {
        moduleId: run.moduleId,
        runId: run.id,
        restoreId: run.restoreId,
        putBack,
        nextControlSeq: run.report?.summary.control_seq.next ?? null,
        nowMs: clock.now(),
      });
    } catch (error) {
      logger.warn(
        { run_id: run.id, module_id: run.moduleId, err: messageOf(error) },
        'conformance run could not release its box; its hold passes with its lease',
      );
    }
  }

  /** Keeps the run, dropping the box's oldest beyond RUNS_KEPT_PER_BOX. */
  #keep(run: Run): void {
    this.#runs.set(run.id, run);
    const ids = [...(this.#byBox.get(run.moduleId) ?? []), run.id];
    while (ids.length > RUNS_KEPT_PER_BOX) {
      const dropped = ids.shift();
      if (dropped !== undefined) this.#runs.delete(dropped);
    }
    this.#byBox.set(run.moduleId, ids);
  }

  #changed(run: Run): void {
    const listener = this.deps.onChange;
    if (listener === undefined) return;
    try {
      listener(this.#view(run));
    } catch (error) {
      this.deps.logger.warn({ run_id: run.id, err: messageOf(error) }, 'conformance run listener failed');
    }
  }

  #view(run: Run): ConformanceRunView {
    const elapsed = (run.endedMs ?? this.deps.clock.now()) - run.startedMs;
    return {
      id: run.id,
      module_id: run.moduleId,
      state: run.state,
      started_at: new Date(run.startedMs).toISOString(),
      ended_at: run.endedMs === null ? null : new Date(run.endedMs).toISOString(),
      error: run.error,
      options: optionsView(run.options),
      cases: run.results.map(caseView),
      summary: summaryView(run.moduleId, run.results, elapsed, run.firstControlSeq, run.report),
    };
  }
}

function optionsView(options: RunOptions): ConformanceRunView['options'] {
  return {
    skip_wearing: options.skipWearing,
    protocol: options.protocol,
    answer_ms: options.answerMs,
    cycle_ms: options.cycleMs,
  };
}

/** A kept conformance run as GET /api/operator/conformance/:run_id shows it. */
function keptView(kept: RunWithResults): ConformanceRunView {
  const cases = suiteReportOf(kept, null).results;
  const stored = kept.summary ?? {};
  const controlSeq = (stored['control_seq'] ?? {}) as Record<string, unknown>;
  const counted = summaryView(kept.module_id, cases, kept.duration_ms, numberOr(controlSeq['first'], 0), undefined);
  const next = controlSeq['next'];
  const { options } = kept;
  return {
    id: kept.id,
    module_id: kept.module_id,
    state: kept.state,
    started_at: kept.started_at,
    ended_at: kept.ended_at,
    error: kept.error,
    options: {
      skip_wearing: options['skip_wearing'] === true,
      protocol: options['protocol'] === 1 ? 1 : 2,
      answer_ms: numberOr(options['answer_ms'], RUN_DEFAULTS.answerMs),
      cycle_ms: numberOr(options['cycle_ms'], RUN_DEFAULTS.cycleMs),
    },
    cases: cases.map(caseView),
    summary:
      kept.summary === null
        ? counted
        : {
            target: 'mqtt',
            module_id: kept.module_id,
            total: numberOr(stored['total'], counted.total),
            passed: numberOr(stored['passed'], counted.passed),
            failed: numberOr(stored['failed'], counted.failed),
            skipped: numberOr(stored['skipped'], counted.skipped),
            ms: numberOr(stored['ms'], counted.ms),
            control_seq: { first: counted.control_seq.first, next: typeof next === 'number' ? next : null },
            interrupted: stored['interrupted'] === true,
          },
  };
}
