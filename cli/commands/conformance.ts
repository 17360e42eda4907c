// `parkbench conformance`: run the box conformance suite (conformance/)
// against one box on a serial port, over BLE or over MQTT, and report as a
// table, JSON and/or JUnit XML. Exit 0 only when every case passed, 1 when
// any failed (or the box cannot be reached), 2 for bad flags or a bad
// provisioning file, 130 when interrupted (SIGINT; 143 for SIGTERM: the
// command in flight is answered, the box's issuer keys are put back, and
// what ran is reported).
import type { Command } from 'commander';
import { U32_MAX } from '../../firmware-protocol/index.js';
import { checkReplaceable, writeFileAtomic } from '../../lib/atomic-file.js';
import { systemClock } from '../../lib/clock.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import { passedAll, type SuiteReport } from '../../conformance/case-result.js';
import { renderJson } from '../../conformance/reports/json.js';
import { renderJunit } from '../../conformance/reports/junit.js';
import { DEFAULT_TABLE_WIDTH, renderTable } from '../../conformance/reports/table.js';
import { runSuite } from '../../conformance/run-suite.js';
import { SuiteNotStarted } from '../../conformance/first-answer.js';
import {
  DEFAULT_ANSWER_MS,
  DEFAULT_CYCLE_MS,
  DEFAULT_WAIT_MS,
  freshKeyIdBase,
} from '../../conformance/suite-defaults.js';
import { parseConformanceFlags, type ConformanceFlags } from '../conformance/flags.js';
import { openTarget } from '../conformance/open-target.js';
import { CliError, ExitCode } from '../errors.js';
import { createCliLogger } from '../logger.js';
import { messageOf } from '../../lib/message-of.js';

export function registerConformanceCommand(program: Command): void {
  program
    .command('conformance')
    .description('Run the box conformance suite against one box (a real one on a bench, or a simulated one)')
    .option(
      '--box <file>',
      "the box's provisioning file (a sealed or a signed parking's box): its keys, so the suite seals its own commands",
    )
    .option('--serial <path[:baud]>', 'the box is on this serial port (default 115200 baud)')
    .option(
      '--ble <mac>',
      'the box is reached over BLE at this MAC address (noble; NOBLE_WEBSOCKET=1 for `parkbench sim --ble`)',
    )
    .option('--mqtt <url>', 'the box is reached through this broker (a simulated box, or a real one behind a gateway)')
    .option('--module-id <n>', "with --mqtt: the box's module_id (default: the provisioning file's)")
    .option('--username <name>', 'with --mqtt: MQTT username (an operator account)')
    .option('--password <password>', 'with --mqtt: MQTT password')
    .option(
      '--topic-prefix <prefix>',
      'with --mqtt: first MQTT topic level',
      process.env.MQTT_TOPIC_PREFIX ?? 'parkbench',
    )
    .option('--answer-ms <ms>', 'longest time the box may take to answer a command', String(DEFAULT_ANSWER_MS))
    .option(
      '--cycle-ms <ms>',
      'longest time for the barrier to show OPENING then CLOSED after a valid ACCESS',
      String(DEFAULT_CYCLE_MS),
    )
    .option(
      '--wait-ms <ms>',
      "longest wait for the box's first answer (its serial port to appear, then an answer) before the cases; 0: none",
      String(DEFAULT_WAIT_MS),
    )
    .option('--control-seq <n>', 'first control sequence, going up by one (default: the current Unix time in seconds)')
    .option(
      '--held-revocations <n>',
      "live revocations the box holds that the suite does not add (the service's own), counted in the list's capacity",
      '0',
    )
    .option(
      '--protocol <1|2>',
      'the protocol version of the box: 1 runs the version 1 cases alone (a box on version 1 firmware)',
      '2',
    )
    .option(
      '--restore-issuer-key <hex>',
      "the box's issuer_key (128 hex digits), put back when the suite ends (default: the provisioning file's)",
    )
    .option(
      '--restore-issuer-key-previous <hex|none>',
      "with --restore-issuer-key: the box's issuer_key_previous (default: none)",
    )
    .option(
      '--skip-wearing',
      'skip the cases marked wearing (they move a real barrier, spend tries many times or fill the revocation list)',
    )
    .option('--json', 'print the results and a summary as JSON instead of the table')
    .option('--junit <file>', 'also write the results as JUnit XML to this file')
    .option(
      '--log-level <level>',
      'logs of the links, on stderr: fatal, error, warn, info, debug, trace or silent',
      'warn',
    )
    .action(async (flags: ConformanceFlags) => {
      await runConformance(flags);
    });
}

async function runConformance(flags: ConformanceFlags): Promise<void> {
  const options = await parseConformanceFlags(flags, systemClock.now());
  // A --junit path that is no regular file is refused (exit 2) before the box is touched.
  if (options.junit !== undefined) checkReplaceable(options.junit);
  const logger = createCliLogger(options.logLevel, 'parkbench-conformance');
  const waitUntil = systemClock.now() + options.waitMs;
  const target = await openTarget(options.choice, options.provisioning, options.cycleMs, logger, waitUntil);
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
      box: boxUnderTest(options.provisioning, options.issuerKeys),
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
    });
  } catch (error) {
    if (error instanceof SuiteNotStarted) throw new CliError(error.message);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await target.close().catch(() => undefined);
  }
  // The terminal's width; DEFAULT_TABLE_WIDTH when stdout is no terminal (piped, redirected).
  process.stdout.write(
    options.json
      ? renderJson(report)
      : renderTable(report, process.stdout.isTTY ? process.stdout.columns : DEFAULT_TABLE_WIDTH),
  );
  const junit = options.junit;
  if (junit !== undefined) {
    await writeFileAtomic(junit, renderJunit(report), { mode: 0o644 }).catch((error: unknown) => {
      throw new CliError(`cannot write ${junit}: ${messageOf(error)}`);
    });
  }
  if (report.interrupted === true) process.exitCode = exitCodeFor(stoppedBy ?? 'SIGINT');
  else if (!passedAll(report)) process.exitCode = ExitCode.failure;
}

/** 128 + the signal's number, as a shell reports a command a signal stopped. */
function exitCodeFor(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? 143 : 130;
}
