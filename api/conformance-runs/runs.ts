// Conformance runs started from the operator API (issue 17): the suite of
// conformance/ against one box, through the API's broker (MQTT target),
// reported as the CLI reports it. One run per box at a time; the runs live in
// this process's memory (the newest RUNS_KEPT_PER_BOX per box) and are lost
// with it: a run is a bench session's tool, its JUnit and JSON are what
// last. When the API stops, every run is aborted (the suite's signal, as
// SIGINT does on the command line): the command in flight is answered and
// the box's issuer keys are put back before the MQTT side closes.
import { randomBytes } from 'node:crypto';
import type { BoxUnderTest } from '../../conformance/box-under-test.js';
import type { CaseResult, SuiteReport } from '../../conformance/case-result.js';
import type { ProtocolVersion } from '../../conformance/cases/index.js';
import { runSuite } from '../../conformance/run-suite.js';
import { DEFAULT_ANSWER_MS, DEFAULT_CYCLE_MS, freshKeyIdBase } from '../../conformance/suite-defaults.js';
import { MqttBoxTarget } from '../../conformance/targets/mqtt-box-target.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import { Topics } from '../../lib/mqtt-topics.js';
import type { ApiConfig } from '../config.js';
import { ControlSequences } from '../control/sequence.js';
import type { Store } from '../db/store.js';
import { conflict, notFound, refused } from '../domain-error.js';
import type { MqttService } from '../mqtt/mqtt-service.js';
import { caseView, summaryView, type ConformanceRunView, type RunState } from './run-view.js';
import { boxUnderTestOf, reserveControlSequences } from './suite-box.js';
import { SuiteLogins } from './suite-login.js';

/** Runs kept per box, newest first; a running one is the newest, so it is never dropped. */
export const RUNS_KEPT_PER_BOX = 10;

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
  config: Pick<ApiConfig, 'mqttUrl' | 'mqttUsername' | 'mqttPassword' | 'mqttTopicPrefix'>;
  logger: Logger;
  /** Called with the run's new state when it starts, as each case ends, and when it ends
   * (the bench page's event stream). A listener that throws is logged, never fails the run. */
  onChange?: (run: ConformanceRunView) => void;
}

interface Run {
  readonly id: string;
  readonly moduleId: number;
  readonly options: RunOptions;
  readonly startedMs: number;
  readonly firstControlSeq: number;
  readonly results: CaseResult[];
  readonly abort: AbortController;
  state: RunState;
  endedMs: number | null;
  error: string | null;
  report: SuiteReport | undefined;
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
   * under a run already, and a box its broker says is offline. */
  async start(moduleId: number, options: RunOptions, broker: RunBroker): Promise<ConformanceRunView> {
    const current = this.#byBox.get(moduleId)?.find((id) => this.#runs.get(id)?.state === 'running');
    if (current !== undefined) throw conflict(`box ${moduleId} is under conformance run ${current}: one at a time`);
    // Its reads and reservation are awaited: a second start meanwhile is refused as the run's.
    if (this.#starting.has(moduleId)) throw conflict(`box ${moduleId} is starting a conformance run: one at a time`);
    this.#starting.add(moduleId);
    try {
      return await this.#start(moduleId, options, broker);
    } finally {
      this.#starting.delete(moduleId);
    }
  }

  async #start(moduleId: number, options: RunOptions, broker: RunBroker): Promise<ConformanceRunView> {
    const { store, clock } = this.deps;
    const box = await boxUnderTestOf(store, moduleId);
    const availability = broker.availabilityOf(moduleId);
    if (availability.availability === 'offline')
      throw refused(`box ${moduleId} is offline (${availability.reason ?? 'no reason given'}): no case could pass`);
    if (options.protocol === 1 && box.parkingKey === null)
      throw refused(`protocol 1 needs a box holding K_park: box ${moduleId} is of a signed parking`);
    const firstControlSeq = await reserveControlSequences(store, moduleId);
    const run: Run = {
      id: randomBytes(9).toString('base64url'),
      moduleId,
      options,
      startedMs: clock.now(),
      firstControlSeq,
      results: [],
      abort: new AbortController(),
      state: 'running',
      endedMs: null,
      error: null,
      report: undefined,
    };
    this.#keep(run);
    this.deps.logger.info({ run_id: run.id, module_id: moduleId }, 'conformance run started');
    this.#changed(run);
    const done = this.#execute(run, box, broker.url).finally(() => this.#running.delete(moduleId));
    this.#running.set(moduleId, done);
    return this.#view(run);
  }

  /** The run, or undefined when this process has none of that id (never had, or dropped). */
  get(runId: string): ConformanceRunView | undefined {
    const run = this.#runs.get(runId);
    return run === undefined ? undefined : this.#view(run);
  }

  /** The run's report for its JUnit and JSON: a run still going is refused. */
  ended(runId: string): EndedRun {
    const run = this.#runs.get(runId);
    if (run === undefined) throw notFound(`no conformance run ${runId} in this API process`);
    if (run.state === 'running') throw refused(`conformance run ${runId} has not ended: its files come at the end`);
    return { run: this.#view(run), report: run.report };
  }

  /** Aborts every run and waits for each to put the box's issuer keys back. */
  async close(): Promise<void> {
    for (const run of this.#runs.values()) run.abort.abort();
    await Promise.allSettled(this.#running.values());
  }

  async #execute(run: Run, box: BoxUnderTest, brokerUrl: string): Promise<void> {
    const { clock, config, store } = this.deps;
    let target: MqttBoxTarget | undefined;
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
      const report = await runSuite({
        box,
        target,
        clock,
        settings: {
          answerMs: run.options.answerMs,
          cycleMs: run.options.cycleMs,
          controlSeq: run.firstControlSeq,
          keyIdBase: freshKeyIdBase(),
        },
        skipWearing: run.options.skipWearing,
        protocol: run.options.protocol,
        onResult: (result) => {
          run.results.push(result);
          this.#changed(run);
        },
        signal: run.abort.signal,
      });
      // The sequences it reserved cover the run; past them if it took more.
      await new ControlSequences(store).skipTo(run.moduleId, report.summary.control_seq.next);
      run.report = report;
      if (report.interrupted === true) {
        run.state = 'error';
        run.error = 'interrupted: the API stopped; the cases after the last one shown did not run';
      } else run.state = report.summary.failed === 0 ? 'passed' : 'failed';
    } catch (error) {
      run.state = 'error';
      run.error = messageOf(error);
    } finally {
      await target?.close().catch(() => undefined);
    }
    run.endedMs = clock.now();
    this.deps.logger.info(
      { run_id: run.id, module_id: run.moduleId, state: run.state, error: run.error ?? undefined },
      'conformance run ended',
    );
    this.#changed(run);
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
      options: {
        skip_wearing: run.options.skipWearing,
        protocol: run.options.protocol,
        answer_ms: run.options.answerMs,
        cycle_ms: run.options.cycleMs,
      },
      cases: run.results.map(caseView),
      summary: summaryView(run.moduleId, run.results, elapsed, run.firstControlSeq, run.report),
    };
  }
}
