// One soak run: the box opened again and again, each cycle with a fresh key
// it seals (K_park) or signs (one of the run's own issuers, installed with
// SET_ISSUER as the conformance suite does, and the box's issuer keys put
// back at the end, whatever happened). Each cycle records the answer's
// status and time, the time to OPEN and back to CLOSED from the box's
// status reports, battery_mv, and box_time's drift from the true time. A
// failure is a status other than OK, no (verified) answer within
// --answer-ms, or no OPEN then CLOSED within --cycle-ms of the command.
// With `powerCycleEvery`, the box is power-cycled before every N-th cycle
// through the PowerDriver given, or, without one, by the target's own
// restart() (a target that closes its link, cycles the power and opens the
// link again, for a USB serial port the box powers); then the run waits
// for its answer again.
import { parseResponse, Status, verifyResponse, type ParsedResponse } from '../firmware-protocol/index.js';
import { sleep, type Clock } from '../lib/clock.js';
import { messageOf } from '../lib/message-of.js';
import type { PowerDriver } from '../lib/power/power-driver.js';
import { BarrierWatch } from '../conformance/barrier-watch.js';
import {
  accessCommand,
  setIssuerCommand,
  signedAccessCommand,
  type AccessSpec,
  type BoxUnderTest,
} from '../conformance/box-under-test.js';
import type { BoxTarget } from '../conformance/box-target.js';
import type { CaseResult } from '../conformance/case-result.js';
import { describeStatus } from '../conformance/expectations.js';
import { awaitFirstAnswer, SuiteNotStarted } from '../conformance/first-answer.js';
import { SuiteInterrupted, untilInterrupted } from '../conformance/interrupted.js';
import { restoreIssuerKeys } from '../conformance/restore-issuers.js';
import { CaseRun, freshIssuers, SuiteContext, type SuiteIssuers } from '../conformance/suite-context.js';
import { BarrierReports } from './barrier-reports.js';
import { CycleLog } from './cycle-log.js';
import { judge, MEASURES, type Limit, type Measure, type MeasureStatistics, type LimitVerdict } from './limits.js';
import { statisticsOf } from './statistics.js';

export interface SoakSettings {
  /** Longest wait for an answer, ms (--answer-ms): none in time is a failed cycle. */
  readonly answerMs: number;
  /** Longest time from the command to OPEN then CLOSED, ms (--cycle-ms). */
  readonly cycleMs: number;
  /** The first control sequence (SET_ISSUER, BATTERY_QUERY before the first cycle). */
  readonly controlSeq: number;
  /** The first smart key id; each cycle takes the next. */
  readonly keyIdBase: number;
  /** Longest wait for the box's first answer, ms (--wait-ms), before the
   * first cycle and after each power cycle; without it the cycles start at once. */
  readonly firstAnswerMs?: number;
}

/** When the run ends: after `cycles`, after `durationMs` of the run's clock, whichever comes first. */
export interface SoakStop {
  readonly cycles?: number;
  readonly durationMs?: number;
}

export interface SoakProgress {
  readonly cycles: number;
  readonly failures: number;
  /** The run's clock, ms since it began. */
  readonly elapsedMs: number;
}

export interface RunSoakOptions {
  readonly box: BoxUnderTest;
  /** Open already; the caller closes it. */
  readonly target: BoxTarget;
  /** The run's timing: its duration, the waits' time-outs, the rate and what is left. */
  readonly clock: Clock;
  /** The answer, OPEN and CLOSED times, ms; default performance.now. */
  readonly monotonic?: () => number;
  readonly settings: SoakSettings;
  readonly stop: SoakStop;
  readonly limits: readonly Limit[];
  /** Aborted: no cycle starts, the wait under way ends; the issuer keys are put back all the same. */
  readonly signal?: AbortSignal;
  /** Aborted: the wait for the put-back's answer ends at once. */
  readonly putBackSignal?: AbortSignal;
  /** The switch the box's power goes through, for `powerCycleEvery`;
   * without it, the target's restart() where it has one. */
  readonly power?: PowerDriver;
  /** Power-cycle the box before every N-th cycle (N+1, 2N+1, ...). */
  readonly powerCycleEvery?: number;
  readonly onCycle?: (progress: SoakProgress) => void;
  readonly issuers?: SuiteIssuers;
}

export interface PowerCycle {
  /** The cycle it came before. */
  readonly beforeCycle: number;
  /** Off, on, the switch's settle time and the box's first answer, ms. */
  readonly ms: number;
  /** Why the box did not come back, when it did not. */
  readonly failure?: string;
}

export interface SoakSummary {
  readonly target: string;
  readonly module_id: number;
  readonly access: 'sealed' | 'signed';
  readonly cycles: number;
  readonly failures: number;
  readonly ms: number;
  /** Cycles per second over the run. */
  readonly rate: number;
  readonly power_cycles: number;
  readonly passed: boolean;
}

export interface SoakReport {
  readonly summary: SoakSummary;
  /** The limits judged, in the order of `verdicts`. */
  readonly limits: readonly Limit[];
  readonly verdicts: readonly LimitVerdict[];
  readonly measurements: Readonly<Record<Measure, MeasureStatistics>>;
  readonly log: CycleLog;
  readonly powerCycles: readonly PowerCycle[];
  /** The SET_ISSUER that put the box's issuer keys back (a signed run). */
  readonly putBack?: CaseResult;
  /** Stopped by an abort (SIGINT) before its end. */
  readonly interrupted: boolean;
  readonly startedAt: number;
}

/** How far past the box's clock a cycle's key stays valid, s: it opens
 * now, and the box forgets its tries soon after (docs/protocol.md, after
 * step 11), so a long run does not fill the box's table of tries. */
export const KEY_VALID_AHEAD_SECONDS = 30;

export class SoakNotStarted extends Error {
  override readonly name = 'SoakNotStarted';
}

export async function runSoak(options: RunSoakOptions): Promise<SoakReport> {
  const { box, target, clock, settings, signal } = options;
  const monotonic = options.monotonic ?? (() => performance.now());
  const reports = new BarrierReports(clock, monotonic, signal);
  target.onBarrier(reports.add);
  const context = new SuiteContext(
    box,
    target,
    new BarrierWatch(clock, signal),
    clock,
    {
      answerMs: settings.answerMs,
      cycleMs: settings.cycleMs,
      controlSeq: settings.controlSeq,
      keyIdBase: settings.keyIdBase,
    },
    signal,
    options.putBackSignal,
    options.issuers ?? freshIssuers(),
  );
  const signed = box.parkingKey === null;
  const log = new CycleLog();
  const powerCycles: PowerCycle[] = [];
  const startedAt = clock.now();
  let putBack: CaseResult | undefined;
  // The box's clock as its answers tell it; until the first, the true time
  // (a run that starts at once, with no first answer awaited).
  let boxTime = { seconds: Math.floor(clock.now() / 1000), at: clock.now() };
  const learn = (fields: ParsedResponse): void => {
    boxTime = { seconds: fields.boxTime, at: clock.now() };
  };
  const firstAnswer = async (waitMs: number): Promise<void> => {
    await awaitFirstAnswer(context, waitMs);
    const seconds = context.boxTimeNow();
    if (seconds !== undefined) boxTime = { seconds, at: clock.now() };
  };
  try {
    if (settings.firstAnswerMs !== undefined) await firstAnswer(settings.firstAnswerMs);
    if (signed) await installIssuers(context);
    const restart = restarter(options.power, target, clock);
    const every = restart === undefined ? 0 : (options.powerCycleEvery ?? 0);
    for (let cycle = 1; !ended(cycle); cycle++) {
      if (restart !== undefined && every > 0 && cycle > 1 && (cycle - 1) % every === 0) {
        powerCycles.push(await powerCycle(restart, cycle, firstAnswer, settings, clock, signal));
      }
      const key = cycleKey(context.keyId(), boxTime.seconds + Math.floor((clock.now() - boxTime.at) / 1000), box);
      const command = signed
        ? signedAccessCommand(box, context.issuers.current.privateKey, key)
        : accessCommand(box, key);
      log.push(await oneCycle(command, { box, target, clock, monotonic, settings, reports, signal, learn }));
      options.onCycle?.({ cycles: log.length, failures: log.failures.length, elapsedMs: clock.now() - startedAt });
    }
  } catch (error) {
    if (error instanceof SuiteNotStarted) throw new SoakNotStarted(error.message);
    if (!(error instanceof SuiteInterrupted)) throw error;
  } finally {
    if (context.issuerKeysTouched) putBack = await restoreIssuerKeys(context);
  }
  return report();

  function ended(cycle: number): boolean {
    if (signal?.aborted === true) return true;
    if (options.stop.cycles !== undefined && cycle > options.stop.cycles) return true;
    return options.stop.durationMs !== undefined && clock.now() - startedAt >= options.stop.durationMs;
  }

  function report(): SoakReport {
    return buildSoakReport({
      target: target.kind,
      moduleId: box.moduleId,
      access: signed ? 'signed' : 'sealed',
      log,
      powerCycles,
      ...(putBack === undefined ? {} : { putBack }),
      limits: options.limits,
      interrupted: signal?.aborted === true,
      startedAt,
      ms: clock.now() - startedAt,
    });
  }
}

/** What a report is made of: the cycles and the rest of the run. */
export interface SoakRun {
  readonly target: string;
  readonly moduleId: number;
  readonly access: 'sealed' | 'signed';
  readonly log: CycleLog;
  readonly powerCycles: readonly PowerCycle[];
  readonly putBack?: CaseResult;
  readonly limits: readonly Limit[];
  readonly interrupted: boolean;
  readonly startedAt: number;
  readonly ms: number;
}

/** The run's measurements, judged against its limits. */
export function buildSoakReport(run: SoakRun): SoakReport {
  const { log, powerCycles, putBack, ms } = run;
  const measurements = Object.fromEntries(
    MEASURES.map((measure) => [measure, statisticsOf(log.column(measure))]),
  ) as Record<Measure, MeasureStatistics>;
  const failures = log.failures.length + powerCycles.filter((each) => each.failure !== undefined).length;
  const verdicts = judge(run.limits, measurements, failures);
  return {
    summary: {
      target: run.target,
      module_id: run.moduleId,
      access: run.access,
      cycles: log.length,
      failures,
      ms,
      rate: ms > 0 ? Math.round((log.length * 1_000_000) / ms) / 1000 : 0,
      power_cycles: powerCycles.length,
      passed: verdicts.every((verdict) => verdict.passed) && putBack?.result !== 'fail',
    },
    limits: run.limits,
    verdicts,
    measurements,
    log,
    powerCycles,
    ...(putBack === undefined ? {} : { putBack }),
    interrupted: run.interrupted,
    startedAt: run.startedAt,
  };
}

/** A key for one cycle: fresh key id, one try, valid at the box's `now`
 * with its skew, and for KEY_VALID_AHEAD_SECONDS more. */
export function cycleKey(keyId: number, now: number, box: BoxUnderTest): AccessSpec {
  const notAfter = Math.max(0, now - box.skewSeconds + KEY_VALID_AHEAD_SECONDS);
  return { keyId, notBefore: Math.max(0, notAfter - 60), notAfter, tries: 1 };
}

/** The run's two issuers on the box, as the conformance suite installs them. */
async function installIssuers(context: SuiteContext): Promise<void> {
  const run = new CaseRun(context, 'SET_ISSUER installs the soak run’s issuers');
  context.issuerKeysTouched = true;
  await run.send(
    setIssuerCommand(context.box, context.controlSeq(), {
      issuerKey: context.issuers.current.publicKey,
      issuerKeyPrevious: context.issuers.previous.publicKey,
    }),
    { status: Status.OK },
  );
  if (run.problems.length > 0)
    throw new SoakNotStarted(`the box did not take the run's issuers (SET_ISSUER): ${run.problems.join('; ')}`);
}

/** How the run power-cycles the box: the switch, then its settle time; or the target's restart(). */
interface Restarter {
  readonly description: string;
  restart(): Promise<void>;
}

function restarter(power: PowerDriver | undefined, target: BoxTarget, clock: Clock): Restarter | undefined {
  if (power !== undefined)
    return {
      description: power.description,
      restart: async () => {
        await power.cycle();
        await sleep(clock, power.settleMs);
      },
    };
  const restart = target.restart?.bind(target);
  return restart === undefined ? undefined : { description: 'the target’s restart()', restart };
}

async function powerCycle(
  power: Restarter,
  beforeCycle: number,
  firstAnswer: (waitMs: number) => Promise<void>,
  settings: SoakSettings,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<PowerCycle> {
  const started = clock.now();
  try {
    await untilInterrupted(power.restart(), signal);
    await firstAnswer(settings.firstAnswerMs ?? Math.max(settings.answerMs, 1_000));
    return { beforeCycle, ms: clock.now() - started };
  } catch (error) {
    if (error instanceof SuiteInterrupted) throw error;
    return {
      beforeCycle,
      ms: clock.now() - started,
      failure: `power cycle (${power.description}): ${messageOf(error)}`,
    };
  }
}

interface CycleDeps {
  readonly box: BoxUnderTest;
  readonly target: BoxTarget;
  readonly clock: Clock;
  readonly monotonic: () => number;
  readonly settings: SoakSettings;
  readonly reports: BarrierReports;
  readonly signal: AbortSignal | undefined;
  readonly learn: (fields: ParsedResponse) => void;
}

type Measured = Omit<Parameters<CycleLog['push']>[0], 'at'>;

async function oneCycle(command: Buffer, deps: CycleDeps): Promise<Parameters<CycleLog['push']>[0]> {
  const at = deps.clock.now();
  const measured = await measureCycle(command, deps);
  return { at, ...measured };
}

async function measureCycle(command: Buffer, deps: CycleDeps): Promise<Measured> {
  const { box, target, clock, monotonic, settings, reports, signal } = deps;
  const none = { open_ms: null, cycle_ms: null, battery_mv: null, drift_s: null };
  reports.reset();
  const deadline = clock.now() + settings.cycleMs;
  const sent = monotonic();
  const exchange = await untilInterrupted(target.exchange(command, settings.answerMs), signal);
  const answerMs = round3(monotonic() - sent);
  if (exchange.response === null)
    return {
      status: null,
      answer_ms: null,
      ...none,
      failure: `no answer (${exchange.error ?? 'timeout'} after ${exchange.elapsedMs} ms)`,
    };
  let fields: ParsedResponse;
  try {
    fields = parseResponse(exchange.response);
  } catch (error) {
    return { status: null, answer_ms: answerMs, ...none, failure: `the answer does not parse: ${messageOf(error)}` };
  }
  if (!verifyResponse(exchange.response, box.boxKey, command))
    return { status: fields.status, answer_ms: answerMs, ...none, failure: 'the answer’s tag does not verify' };
  deps.learn(fields);
  const read = {
    status: fields.status,
    answer_ms: answerMs,
    battery_mv: fields.batteryMv,
    drift_s: round3(fields.boxTime - clock.now() / 1000),
  };
  if (fields.status !== Status.OK)
    return { ...read, open_ms: null, cycle_ms: null, failure: `status ${describeStatus(fields.status)}` };
  const open = await reports.waitForUp(deadline - clock.now());
  if (open === null)
    return {
      ...read,
      open_ms: null,
      cycle_ms: null,
      failure: `OPEN not reported within --cycle-ms ${settings.cycleMs} ms`,
    };
  const closed = await reports.waitForDown(open, deadline - clock.now());
  const openMs = round3(open.seen.at - sent);
  if (closed === null)
    return {
      ...read,
      open_ms: openMs,
      cycle_ms: null,
      failure: `CLOSED not reported after OPEN within --cycle-ms ${settings.cycleMs} ms`,
    };
  return { ...read, open_ms: openMs, cycle_ms: round3(closed.seen.at - sent) };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
