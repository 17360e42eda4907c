// `parkbench gateway`: bridge real boxes on serial ports and BLE to MQTT
// (its flags here; run/gateway.ts runs it).
import type { Command } from 'commander';
import { NO_EXIT_WITH_PARENT } from '../signals.js';
import type { GatewayFlags } from '../run/gateway.js';
import { addCaptureOptions } from '../capture-flags.js';

export function registerGatewayCommand(program: Command): void {
  const command = program
    .command('gateway')
    .description('Bridge boxes on serial ports and BLE to MQTT')
    .option('--mqtt <url>', 'broker URL (or MQTT_URL)')
    .option(
      '--username <name>',
      'MQTT username of this gateway, also its gateway_id (parkbench admin mqtt-client add --role gateway)',
    )
    .option('--password <password>', 'MQTT password of this gateway')
    .option(
      '--bench <file>',
      'the bench file (bench.yaml): bridge every box of it on a serial port or BLE (MQTT boxes need no gateway); --serial and --ble-allow add to it',
    )
    .option('--serial <path[:baud]>', 'a box on this serial port (repeatable; default 115200 baud)', collect, [])
    .option('--ble', 'reach boxes advertising PB-<module_id> over BLE (noble)')
    .option('--ble-allow <macs>', 'comma-separated MAC addresses allowed over BLE, where the platform shows them')
    .option('--ble-idle-ms <ms>', 'disconnect from a BLE box after this long without a command', '30000')
    .option('--answer-ms <ms>', 'how long a box may take to answer before a timeout record is published', '5000')
    .option('--topic-prefix <prefix>', 'first MQTT topic level', process.env.MQTT_TOPIC_PREFIX ?? 'parkbench')
    .option(
      '--queue-file <file>',
      "where responses wait for the broker's PUBACK, across restarts (default ./data/gateway-<username>-queue.json)",
    )
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', process.env.LOG_LEVEL ?? 'info')
    .option(...NO_EXIT_WITH_PARENT);
  addCaptureOptions(command, 'every link (serial bytes, BLE chunks, MQTT messages)').action(
    async (flags: GatewayFlags) => {
      const { runGateway } = await import('../run/gateway.js');
      await runGateway(flags);
    },
  );
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
