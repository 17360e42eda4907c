// `parkbench gateway`: bridge real boxes on serial ports and BLE to MQTT.
import { join } from 'node:path';
import type { Command } from 'commander';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseSerialTarget, type SerialTarget } from '../../lib/serial-target.js';
import { isMacAddress } from '../../lib/wire-patterns.js';
import { DiskPublishQueue } from '../../gateway/disk-queue.js';
import { Gateway } from '../../gateway/gateway.js';
import { loadNoble } from '../../lib/noble.js';
import { CliError, UsageError } from '../errors.js';
import { createCliLogger, parseLogLevel } from '../logger.js';
import { NO_EXIT_WITH_PARENT, onShutdown } from '../signals.js';
import { messageOf } from '../../lib/message-of.js';

interface GatewayFlags {
  mqtt?: string;
  username?: string;
  password?: string;
  serial: string[];
  ble?: boolean;
  bleAllow?: string;
  bleIdleMs: string;
  answerMs: string;
  topicPrefix: string;
  queueFile?: string;
  logLevel: string;
  exitWithParent: boolean;
}

export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('Bridge boxes on serial ports and BLE to MQTT')
    .option('--mqtt <url>', 'broker URL (or MQTT_URL)')
    .option(
      '--username <name>',
      'MQTT username of this gateway, also its gateway_id (parkbench admin mqtt-client add --role gateway)',
    )
    .option('--password <password>', 'MQTT password of this gateway')
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
    .option(...NO_EXIT_WITH_PARENT)
    .action(async (flags: GatewayFlags) => {
      await runGateway(flags);
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function runGateway(flags: GatewayFlags): Promise<void> {
  const url = flags.mqtt ?? process.env.MQTT_URL;
  if (url === undefined || !/^(mqtts?|wss?|tcp):\/\/\S+$/.test(url))
    throw new UsageError('--mqtt must be an mqtt:// URL of the broker');
  if (flags.username === undefined || flags.username === '' || flags.password === undefined)
    throw new UsageError('--username and --password are required (parkbench admin mqtt-client add --role gateway)');
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(flags.username))
    throw new UsageError(
      '--username must be 1 to 64 letters, digits, dots, dashes or underscores (it names the gateway in topics)',
    );
  const serial = flags.serial.map(serialTarget);
  if (serial.length === 0 && flags.ble !== true)
    throw new UsageError('give at least one link: --serial PATH[:BAUD] or --ble');
  const paths = new Set(serial.map((target) => target.path));
  if (paths.size !== serial.length) throw new UsageError('each --serial port may be given once');
  const allow = (flags.bleAllow ?? '')
    .split(',')
    .map((mac) => mac.trim().toUpperCase())
    .filter((mac) => mac !== '');
  for (const mac of allow)
    if (!isMacAddress(mac)) throw new UsageError(`--ble-allow: "${mac}" is not a MAC address like AA:BB:CC:DD:EE:FF`);
  const answerTimeoutMs = integer('--answer-ms', flags.answerMs, 1, 600_000);
  const idleMs = integer('--ble-idle-ms', flags.bleIdleMs, 100, 3_600_000);
  const logger = createCliLogger(parseLogLevel(flags.logLevel), 'parkbench-gateway');
  let topics: Topics;
  try {
    topics = new Topics(flags.topicPrefix);
  } catch (error) {
    throw new UsageError(`--topic-prefix: ${messageOf(error)}`);
  }
  const queue = await DiskPublishQueue.open(
    flags.queueFile ?? join('data', `gateway-${flags.username}-queue.json`),
  ).catch((error: unknown) => {
    throw new CliError(messageOf(error));
  });
  const noble =
    flags.ble === true
      ? await loadNoble().catch((error: unknown) => Promise.reject(new CliError(messageOf(error))))
      : undefined;
  const gateway = new Gateway({
    mqtt: { url, username: flags.username, password: flags.password },
    topics,
    clock: systemClock,
    serial,
    answerTimeoutMs,
    queue,
    logger,
    ...(noble === undefined ? {} : { ble: { noble, allow, idleMs } }),
  });
  try {
    await gateway.start();
  } catch (error) {
    await gateway.stop().catch(() => undefined);
    throw new CliError(`cannot start the gateway: ${messageOf(error)}`);
  }
  // Listening before saying ready: whoever reads the ready line may signal at once.
  const stopping = onShutdown({ exitWithParent: flags.exitWithParent });
  process.stdout.write(
    `parkbench gateway ready ${JSON.stringify({ gateway_id: gateway.id, serial: serial.map((target) => target.path), ble: noble !== undefined })}\n`,
  );
  await stopping;
  await gateway.stop();
  await queue.close();
  process.stdout.write(`parkbench gateway stopped ${JSON.stringify(gateway.snapshot())}\n`);
}

function serialTarget(raw: string): SerialTarget {
  try {
    return parseSerialTarget(raw);
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}
