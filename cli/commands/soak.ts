// `parkbench soak`: an endurance run against one box (soak/): opened again
// and again with fresh keys, each cycle measured, the run judged against
// limits. Exit 0 when every limit holds, 1 when one does not (or the box
// cannot be reached), 2 for bad flags, a bad limit or a bad provisioning
// file, 130 when interrupted (SIGINT; 143 for SIGTERM), with the report of
// the cycles that ran.
import type { Command } from 'commander';
import { DEFAULT_ANSWER_MS, DEFAULT_CYCLE_MS, DEFAULT_WAIT_MS } from '../../conformance/suite-defaults.js';
import type { SoakFlags } from '../soak/flags.js';
import { addRecordOptions } from '../service/record-flags.js';

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function registerSoakCommand(program: Command): void {
  const command = program
    .command('soak')
    .description(
      'Open one box again and again (a real one on a bench, or a simulated one) and judge the run against limits',
    )
    .option(
      '--bench <file>',
      "the bench file (bench.yaml): the box's provisioning file, link, power switch and limits; flags given with it override the file's",
    )
    .option(
      '--box <file>',
      "the box's provisioning file: its keys, so the run seals or signs its own commands; with --bench, the box's module_id in the bench file (a bench of one box may leave it out)",
    )
    .option('--serial <path[:baud]>', 'the box is on this serial port (default 115200 baud)')
    .option(
      '--ble <mac>',
      'the box is reached over BLE at this MAC address (NOBLE_WEBSOCKET=1 for `parkbench sim --ble`)',
    )
    .option('--mqtt <url>', 'the box is reached through this broker')
    .option('--module-id <n>', "with --mqtt: the box's module_id (default: the provisioning file's)")
    .option('--username <name>', 'with --mqtt: MQTT username (an operator account)')
    .option('--password <password>', 'with --mqtt: MQTT password')
    .option(
      '--topic-prefix <prefix>',
      "with --mqtt: first MQTT topic level (default: the bench file's topic_prefix, else MQTT_TOPIC_PREFIX, else parkbench)",
    )
    .option('--cycles <n>', 'cycles to run')
    .option('--duration <time>', 'how long to run: 30s, 10m, 8h (with --cycles: whichever ends first)')
    .option(
      '--limit <expression>',
      "a limit, measure.statistic OP number (e.g. 'answer_ms.p99<=250'); repeatable",
      collect,
    )
    .option('--limits <file>', "a YAML list of limit expressions (with --limit: both; else the bench file's limits:)")
    .option(
      '--power-cycle-every <n>',
      "power-cycle the box before every N-th cycle, through the bench file's power switch (--bench)",
    )
    .option('--answer-ms <ms>', 'longest wait for an answer: none in time is a failed cycle', String(DEFAULT_ANSWER_MS))
    .option(
      '--cycle-ms <ms>',
      'longest time from the command to OPEN then CLOSED: longer is a failed cycle',
      String(DEFAULT_CYCLE_MS),
    )
    .option(
      '--wait-ms <ms>',
      "longest wait for the box's first answer before the first cycle; 0: none",
      String(DEFAULT_WAIT_MS),
    )
    .option('--control-seq <n>', 'first control sequence (default: the current Unix time in seconds)')
    .option(
      '--restore-issuer-key <hex>',
      "a signed box's issuer_key (128 hex digits), put back when the run ends (default: the provisioning file's)",
    )
    .option('--restore-issuer-key-previous <hex|none>', "with --restore-issuer-key: the box's issuer_key_previous")
    .option('--json', 'print the result (verdicts, summary, measurements) as JSON on stdout')
    .option('--report <dir>', 'write report.json (every cycle), junit.xml (a testcase per limit) and report.html there')
    .option(
      '--log-level <level>',
      'logs of the links, on stderr: fatal, error, warn, info, debug, trace or silent',
      'warn',
    );
  addRecordOptions(command, 'run (its limits and summary)').action(async (flags: SoakFlags) => {
    const { runSoakCommand } = await import('../run/soak.js');
    await runSoakCommand(flags);
  });
}
