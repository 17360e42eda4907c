// `parkbench sim`: one simulated box (--box FILE) or a fleet (--fleet FILE),
// on MQTT, a serial port and/or a virtual BLE radio, until Ctrl-C (its flags
// here; run/sim.ts runs it).
import type { Command } from 'commander';
import { defaultBarrierTimings } from '../../simulator/barrier.js';
import { FIRMWARE_BUGS } from '../../simulator/firmware-bug-names.js';
import { NO_EXIT_WITH_PARENT } from '../signals.js';
import type { SimFlags } from '../run/sim.js';
import { addCaptureOptions } from '../capture-flags.js';

export function registerSimCommand(program: Command): void {
  const command = program
    .command('sim')
    .description('Run simulated boxes that behave like the firmware, on MQTT, a serial port or BLE')
    .option('--box <file>', 'provisioning file of one box (parkbench admin box provision)')
    .option('--fleet <file>', 'JSON array of provisioning files (parkbench admin fleet provision)')
    .option(
      '--mqtt <url>',
      'broker URL (default: the one in the provisioning file); MQTT is used when given or when no link is named',
    )
    .option('--mqtt-username <name>', "overrides the provisioning file's MQTT username")
    .option('--mqtt-password <password>', "overrides the provisioning file's MQTT password")
    .option('--topic-prefix <prefix>', 'first MQTT topic level', process.env.MQTT_TOPIC_PREFIX ?? 'parkbench')
    .option(
      '--serial <path[:baud]>',
      'speak the serial link framing on this port (one box; alone, it means serial only)',
    )
    .option(
      '--ble',
      "advertise on a virtual BLE radio served on noble's WebSocket port 2846 (NOBLE_WEBSOCKET=1 centrals)",
    )
    .option('--ble-mtu <bytes>', 'ATT MTU of the virtual BLE links', '23')
    .option('--direction <entrance|exit>', "overrides the provisioning file's direction")
    .option('--skew-seconds <n>', "overrides the provisioning file's clock tolerance")
    .option('--min-battery-mv <n>', "overrides the provisioning file's minimum battery")
    .option(
      '--state-dir <dir>',
      'where tries, box_seq, the last control sequence, issuer keys and revocations survive restarts',
      './data/sim',
    )
    .option('--memory-state', 'keep box state in memory only (it is lost on exit)')
    .option(
      '--power-file <file>',
      'power switch: "off" in this file cuts the boxes (links silent, nothing saved), "on" starts them again from --state-dir; missing means on',
    )
    .option('--speed <n>', 'run the boxes this many times faster than real time', '1')
    .option('--opening-ms <ms>', 'time the arm takes to rise', String(defaultBarrierTimings.openingMs))
    .option(
      '--open-hold-ms <ms>',
      'longest time the barrier waits open for the car',
      String(defaultBarrierTimings.openHoldMs),
    )
    .option('--closing-ms <ms>', 'time the arm takes to come down', String(defaultBarrierTimings.closingMs))
    .option(
      '--car-pass-ms <ms>',
      'a car drives through this long after the barrier is open (default: 3000 with --fleet, never with --box)',
    )
    .option('--drop <share>', 'fault: share of commands ignored, 0..1')
    .option('--corrupt <share>', 'fault: share of responses sent with a flipped bit, 0..1')
    .option('--delay-ms <ms>', 'fault: extra delay before every answer')
    .option('--jam', 'fault: the barrier is jammed (ACCESS answers BARRIER_FAULT)')
    .option(
      '--jam-every <n>',
      'fault: every n-th ACCESS that would open the barrier jams it for that opening (BARRIER_FAULT)',
    )
    .option('--battery-drain-mv <mv>', 'fault: the battery drops by this much at each opening')
    .option('--battery-mv <mv>', 'battery level at start')
    .option('--clock-offset-s <seconds>', 'box clock this far from true time at start')
    .option('--drift-ppm <ppm>', 'box clock drift')
    .option(
      '--bug <name>',
      `a deliberate firmware bug, for testing test suites (${FIRMWARE_BUGS.join(', ')})`,
      collect,
      [],
    )
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', process.env.LOG_LEVEL ?? 'info')
    .option(
      '--ready-file <path>',
      'once the boxes answer on their links, write this file (JSON: pid, boxes, links); removed at exit, kept across power cycles',
    )
    .option(...NO_EXIT_WITH_PARENT);
  addCaptureOptions(command, "every link from the boxes' side, with opened records,").action(
    async (flags: SimFlags) => {
      const { runSim } = await import('../run/sim.js');
      await runSim(flags);
    },
  );
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
