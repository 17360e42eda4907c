// `parkbench conformance`: run the box conformance suite (conformance/)
// against one box on a serial port, over BLE or over MQTT (given by flags,
// or by a bench file: --bench FILE --box MODULE_ID), and report as a
// table, JSON and/or JUnit XML. Exit 0 only when every case passed, 1 when
// any failed (or the box cannot be reached), 2 for bad flags, a bad
// provisioning file or a bad bench file, 130 when interrupted (SIGINT; 143
// for SIGTERM: the command in flight is answered, the box's issuer keys are
// put back, and what ran is reported).
import type { Command } from 'commander';
import { DEFAULT_ANSWER_MS, DEFAULT_CYCLE_MS, DEFAULT_WAIT_MS } from '../../conformance/suite-defaults.js';
import { addCaptureOptions } from '../capture-flags.js';
import type { ConformanceFlags } from '../conformance/flags.js';
import { addRecordOptions } from '../service/record-flags.js';

export function registerConformanceCommand(program: Command): void {
  const command = program
    .command('conformance')
    .description('Run the box conformance suite against one box (a real one on a bench, or a simulated one)')
    .option(
      '--bench <file>',
      "the bench file (bench.yaml): the box's provisioning file, link and power switch (a switch lets the power-cycle case run); link flags given with it override the file's",
    )
    .option(
      '--box <file|module_id>',
      "the box's provisioning file (a sealed or a signed parking's box): its keys, so the suite seals its own commands; with --bench, the box's module_id in the bench file (a bench of one box may leave it out)",
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
      "with --mqtt: first MQTT topic level (default: the bench file's topic_prefix, else MQTT_TOPIC_PREFIX, else parkbench)",
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
    .option(
      '--junit <file>',
      "also write the results as JUnit XML to this file (with --capture-dir, each case's capture attached)",
    )
    .option(
      '--log-level <level>',
      'logs of the links, on stderr: fatal, error, warn, info, debug, trace or silent',
      'warn',
    );
  addCaptureOptions(command, 'the whole run (every frame on the link, both ways)').option(
    '--capture-dir <dir>',
    'record each case to its own pcapng file in this folder (NN-<case>.pcapng; made when missing)',
  );
  addRecordOptions(command, 'run');
  command.action(async (flags: ConformanceFlags) => {
    const { runConformance } = await import('../run/conformance.js');
    await runConformance(flags);
  });
}
