// `parkbench soak`: reads the flags, posts the run to the service with
// --record, opens the link as `parkbench conformance` does, runs the soak
// with a progress display on stderr, records its limits and summary,
// prints the result (a few lines, or --json), writes --report DIR, and sets
// the exit code.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../../lib/atomic-file.js';
import { systemClock } from '../../lib/clock.js';
import { messageOf } from '../../lib/message-of.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { freshIssuers } from '../../conformance/suite-context.js';
import { freshKeyIdBase } from '../../conformance/suite-defaults.js';
import { ProgressDisplay } from '../../soak/progress.js';
import { runSoak, SoakNotStarted, type SoakReport } from '../../soak/run-soak.js';
import { renderResultJson, reportJsonChunks, soakResult } from '../../soak/reports/result.js';
import { renderSoakJunit } from '../../soak/reports/junit.js';
import { renderSoakHtml } from '../../soak/reports/html.js';
import { targetOpener } from '../conformance/open-target.js';
import { withPower } from '../conformance/powered-target.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { createCliLogger } from '../logger.js';
import { parseSoakFlags, type SoakFlags, type SoakOptions } from '../soak/flags.js';
import { recordSettings } from '../service/record-flags.js';
import { RunRecorder } from '../service/run-recorder.js';
import { soakRunEnd, soakRunResults, soakRunStart } from '../service/soak-run.js';

export async function runSoakCommand(flags: SoakFlags): Promise<void> {
  const recording = recordSettings(flags, process.env, 'soak');
  const options = await parseSoakFlags(flags, systemClock.now());
  // --record: the run is posted before the link opens (a box reserved by another is exit 3 here).
  const recorder =
    recording === undefined
      ? undefined
      : await RunRecorder.start(recording, soakRunStart(options, recording), 'parkbench soak');
  let report: SoakReport;
  let stoppedBy: NodeJS.Signals | undefined;
  try {
    ({ report, stoppedBy } = await openAndRun(options));
  } catch (error) {
    await recorder?.end({ state: 'error', error: messageOf(error) });
    throw error;
  }
  recorder?.add(...soakRunResults(report));
  const record = await recorder?.end(soakRunEnd(report));
  process.stdout.write(
    options.json
      ? record === undefined
        ? renderResultJson(report)
        : `${JSON.stringify({ ...soakResult(report), record }, null, 2)}\n`
      : renderText(report),
  );
  if (options.reportDir !== undefined) await writeReports(report, options);
  if (report.interrupted) process.exitCode = exitCodeFor(stoppedBy ?? 'SIGINT');
  else if (!report.summary.passed) process.exitCode = ExitCode.failure;
}

/** Opens the link, runs the soak with its progress on stderr, and closes the link. */
async function openAndRun(
  options: SoakOptions,
): Promise<{ report: SoakReport; stoppedBy: NodeJS.Signals | undefined }> {
  const { link } = options;
  const logger = createCliLogger(link.logLevel, 'parkbench-soak');
  const box = boxUnderTest(link.provisioning, link.issuerKeys);
  const open = await targetOpener(link.choice, link.provisioning, link.cycleMs, logger);
  const target = withPower(await open(systemClock.now() + link.waitMs), open, box, link, systemClock);
  if (options.powerCycleEvery !== undefined && target.restart === undefined) {
    await target.close().catch(() => undefined);
    throw new UsageError(`--power-cycle-every: ${target.cannotRestart ?? 'the power switch cannot be worked here'}`);
  }
  // SIGINT (or SIGTERM) ends the run after the cycle in flight; the box's
  // issuer keys are put back and what ran is reported. A second one quits at once.
  const interrupt = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stoppedBy !== undefined) process.exit(exitCodeFor(signal));
    stoppedBy = signal;
    process.stderr.write(
      `\nparkbench: interrupted (${signal}); reporting the cycles that ran (Ctrl-C again to quit at once)\n`,
    );
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = new ProgressDisplay(process.stderr, systemClock, options.stop);
  let report: SoakReport;
  try {
    report = await runSoak({
      box,
      target,
      clock: systemClock,
      settings: {
        answerMs: link.answerMs,
        cycleMs: link.cycleMs,
        controlSeq: link.controlSeq,
        keyIdBase: freshKeyIdBase(),
        ...(link.waitMs > 0 ? { firstAnswerMs: link.waitMs } : {}),
      },
      stop: options.stop,
      ...(options.powerCycleEvery === undefined ? {} : { powerCycleEvery: options.powerCycleEvery }),
      limits: options.limits,
      signal: interrupt.signal,
      issuers: freshIssuers(),
      onCycle: (each) => progress.update(each),
    });
  } catch (error) {
    if (error instanceof SoakNotStarted) throw new CliError(error.message);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.finish();
    await target.close().catch(() => undefined);
  }
  return { report, stoppedBy };
}

async function writeReports(report: SoakReport, options: SoakOptions): Promise<void> {
  const dir = options.reportDir ?? '.';
  try {
    await mkdir(dir, { recursive: true });
    await writeChunks(join(dir, 'report.json'), reportJsonChunks(report));
    await writeFileAtomic(join(dir, 'junit.xml'), renderSoakJunit(report), { mode: 0o644 });
    await writeFileAtomic(join(dir, 'report.html'), renderSoakHtml(report), { mode: 0o644 });
  } catch (error) {
    throw new CliError(`cannot write the report to ${dir}: ${messageOf(error)}`);
  }
}

/** `chunks` to a file beside `path`, flushed, then renamed over it: a
 * report of millions of cycles never is one string, and a reader never
 * sees half of one. */
async function writeChunks(path: string, chunks: Iterable<string>): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx', 0o644);
    try {
      for (const chunk of chunks) await file.write(chunk);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The verdicts, one a line, the failures' first few, and a summary line. */
function renderText(report: SoakReport): string {
  const { summary } = report;
  const lines = report.verdicts.map(
    (verdict) =>
      `${verdict.passed ? 'pass' : 'FAIL'}  ${verdict.limit}  (measured ${verdict.actual === null ? 'nothing' : String(verdict.actual)})`,
  );
  if (report.putBack !== undefined)
    lines.push(
      `${report.putBack.result === 'pass' ? 'pass' : 'FAIL'}  ${report.putBack.name}${report.putBack.reason === undefined ? '' : `: ${report.putBack.reason}`}`,
    );
  const failures = report.log.failures;
  if (failures.length > 0) {
    lines.push('', 'failures:');
    for (const failure of failures.slice(0, 10)) lines.push(`  cycle ${failure.cycle}: ${failure.reason}`);
    if (failures.length > 10) lines.push(`  and ${failures.length - 10} more (--report DIR lists them all)`);
  }
  if (report.interrupted) lines.push('', 'interrupted: the cycles after the last one did not run');
  lines.push(
    '',
    `${summary.passed ? 'passed' : 'FAILED'}: ${summary.cycles} cycles, ${summary.failures} failures, ${summary.rate} cycles/s (${summary.target}, module ${summary.module_id}, ${summary.ms} ms)`,
  );
  return `${lines.join('\n')}\n`;
}

/** 128 + the signal's number, as a shell reports a command a signal stopped. */
function exitCodeFor(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? 143 : 130;
}
