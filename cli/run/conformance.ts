// `parkbench conformance`, its flags read (commands/conformance.ts): opens
// the captures, posts the run to the service with --record, opens the link
// to the box, runs the suite (each result recorded as it ends), reports,
// and sets the exit code.
import { resolve } from 'node:path';
import { U32_MAX } from '../../firmware-protocol/index.js';
import { checkReplaceable, writeFileAtomic } from '../../lib/atomic-file.js';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { suiteKeys } from '../../conformance/capture/suite-keys.js';
import type { RunCapture } from '../../conformance/capture/run-capture.js';
import { freshIssuers } from '../../conformance/suite-context.js';
import { passedAll, type SuiteReport } from '../../conformance/case-result.js';
import { jsonReport } from '../../conformance/reports/json.js';
import { renderJunit } from '../../conformance/reports/junit.js';
import { DEFAULT_TABLE_WIDTH, renderTable } from '../../conformance/reports/table.js';
import { runSuite } from '../../conformance/run-suite.js';
import { SuiteNotStarted } from '../../conformance/first-answer.js';
import { freshKeyIdBase } from '../../conformance/suite-defaults.js';
import { parseConformanceFlags, type ConformanceFlags, type ConformanceOptions } from '../conformance/flags.js';
import { targetOpener } from '../conformance/open-target.js';
import { withPower } from '../conformance/powered-target.js';
import { openRunCapture } from '../conformance/run-capture.js';
import { CliError, ExitCode } from '../errors.js';
import type { Logger } from '../../lib/logger.js';
import { createCliLogger } from '../logger.js';
import { messageOf } from '../../lib/message-of.js';
import { recordSettings } from '../service/record-flags.js';
import { RunRecorder } from '../service/run-recorder.js';
import { caseResultInput, conformanceRunEnd, conformanceRunStart } from '../service/conformance-run.js';

export async function runConformance(flags: ConformanceFlags): Promise<void> {
  const recording = recordSettings(flags, process.env, 'conformance');
  const options = await parseConformanceFlags(flags, systemClock.now());
  // A --junit path that is no regular file is refused (exit 2) before the box is touched.
  if (options.junit !== undefined) checkReplaceable(options.junit);
  const start = recording === undefined ? undefined : conformanceRunStart(options, recording);
  const logger = createCliLogger(options.logLevel, 'parkbench-conformance');
  const capture = openRunCapture(flags, logger);
  try {
    // --record: the run is posted before the link opens (a box reserved by another is exit 3 here).
    const recorder =
      recording === undefined || start === undefined
        ? undefined
        : await RunRecorder.start(recording, start, 'parkbench conformance');
    await runAndReport(options, logger, capture, recorder);
  } finally {
    capture?.close();
  }
}

async function runAndReport(
  options: ConformanceOptions,
  logger: Logger,
  capture: RunCapture | undefined,
  recorder: RunRecorder | undefined,
): Promise<void> {
  let suite: { report: SuiteReport; stoppedBy: NodeJS.Signals | undefined };
  try {
    suite = await openAndRun(options, logger, capture, recorder);
  } catch (error) {
    await recorder?.end({ state: 'error', error: messageOf(error) });
    throw error;
  }
  const { report, stoppedBy } = suite;
  const record = await recorder?.end(conformanceRunEnd(report, capture?.runFiles ?? []));
  // The terminal's width; DEFAULT_TABLE_WIDTH when stdout is no terminal (piped, redirected).
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ ...jsonReport(report), ...(record === undefined ? {} : { record }) }, null, 2)}\n`
      : renderTable(report, process.stdout.isTTY ? process.stdout.columns : DEFAULT_TABLE_WIDTH),
  );
  const junit = options.junit;
  if (junit !== undefined) {
    const runCaptures = (capture?.runFiles ?? []).map((path) => resolve(path));
    await writeFileAtomic(junit, renderJunit(report, { runCaptures }), { mode: 0o644 }).catch((error: unknown) => {
      throw new CliError(`cannot write ${junit}: ${messageOf(error)}`);
    });
  }
  if (report.interrupted === true) process.exitCode = exitCodeFor(stoppedBy ?? 'SIGINT');
  else if (!passedAll(report)) process.exitCode = ExitCode.failure;
}

/** Opens the link, runs the suite (each result also to `recorder`) and closes the link. */
async function openAndRun(
  options: ConformanceOptions,
  logger: Logger,
  capture: RunCapture | undefined,
  recorder: RunRecorder | undefined,
): Promise<{ report: SuiteReport; stoppedBy: NodeJS.Signals | undefined }> {
  const waitUntil = systemClock.now() + options.waitMs;
  const box = boxUnderTest(options.provisioning, options.issuerKeys);
  const issuers = freshIssuers();
  const open = await targetOpener(
    options.choice,
    options.provisioning,
    options.cycleMs,
    logger,
    capture === undefined ? undefined : { sink: capture, keys: suiteKeys(box, issuers) },
  );
  const target = withPower(await open(waitUntil), open, box, options, systemClock);
  // SIGINT (or SIGTERM) stops the run after the command in flight, and the
  // suite puts the box's issuer keys back before the report; a second signal
  // exits at once.
  const interrupt = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stoppedBy !== undefined) process.exit(exitCodeFor(signal));
    stoppedBy = signal;
    process.stderr.write(
      `parkbench: interrupted (${signal}); putting the box's issuer keys back (Ctrl-C again to quit at once)\n`,
    );
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let report: SuiteReport;
  try {
    report = await runSuite({
      box,
      target,
      clock: systemClock,
      settings: {
        answerMs: options.answerMs,
        cycleMs: options.cycleMs,
        controlSeq: options.controlSeq,
        keyIdBase: freshKeyIdBase(),
        // 0: the cases start at once, as against a box known to listen.
        ...(options.waitMs > 0 ? { firstAnswerMs: options.waitMs } : {}),
        heldRevocations: Array.from({ length: options.heldRevocations }, () => U32_MAX),
      },
      skipWearing: options.skipWearing,
      protocol: options.protocol,
      signal: interrupt.signal,
      issuers,
      ...(capture === undefined ? {} : { capture }),
      ...(recorder === undefined ? {} : { onResult: (result) => recorder.add(caseResultInput(result)) }),
    });
  } catch (error) {
    if (error instanceof SuiteNotStarted) throw new CliError(error.message);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await target.close().catch(() => undefined);
  }
  return { report, stoppedBy };
}

/** 128 + the signal's number, as a shell reports a command a signal stopped. */
function exitCodeFor(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? 143 : 130;
}
