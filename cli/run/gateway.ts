// `parkbench gateway`, its flags read (commands/gateway.ts): checks them,
// opens the disk queue and the links, bridges until a signal. With --bench,
// the links are the bench file's serial and BLE boxes, plus the flags'.
import { join } from 'node:path';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseSerialTarget, type SerialTarget } from '../../lib/serial-target.js';
import { isMacAddress } from '../../lib/wire-patterns.js';
import { DiskPublishQueue } from '../../gateway/disk-queue.js';
import { Gateway } from '../../gateway/gateway.js';
import { loadNoble } from '../../lib/noble.js';
import { CliError, UsageError } from '../errors.js';
import { createCliLogger, parseLogLevel } from '../logger.js';
import { onShutdown } from '../signals.js';
import { messageOf } from '../../lib/message-of.js';
import { openCaptureFile, type CaptureFlags } from '../capture-flags.js';
import type { BenchFile } from '../../lib/bench/bench-file.js';
import { loadBench } from '../conformance/bench-box.js';

export interface GatewayFlags extends CaptureFlags {
  bench?: string;
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

export async function runGateway(flags: GatewayFlags): Promise<void> {
  const url = flags.mqtt ?? process.env.MQTT_URL;
  if (url === undefined || !/^(mqtts?|wss?|tcp):\/\/\S+$/.test(url))
    throw new UsageError('--mqtt must be an mqtt:// URL of the broker');
  if (flags.username === undefined || flags.username === '' || flags.password === undefined)
    throw new UsageError('--username and --password are required (parkbench admin mqtt-client add --role gateway)');
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(flags.username))
    throw new UsageError(
      '--username must be 1 to 64 letters, digits, dots, dashes or underscores (it names the gateway in topics)',
    );
  const flagSerial = flags.serial.map(serialTarget);
  const flagAllow = (flags.bleAllow ?? '')
    .split(',')
    .map((mac) => mac.trim().toUpperCase())
    .filter((mac) => mac !== '');
  for (const mac of flagAllow)
    if (!isMacAddress(mac)) throw new UsageError(`--ble-allow: "${mac}" is not a MAC address like AA:BB:CC:DD:EE:FF`);
  const bench = flags.bench === undefined ? undefined : benchLinks(await loadBench(flags.bench));
  // A --serial flag for a port of the bench file gives its baud rate instead of the file's.
  const serial = [
    ...(bench?.serial ?? []).filter((target) => !flagSerial.some((flag) => flag.path === target.path)),
    ...flagSerial,
  ];
  const ble = flags.ble === true || (bench?.ble.length ?? 0) > 0;
  const allow = [...new Set([...(bench?.ble ?? []), ...flagAllow])];
  if (serial.length === 0 && !ble)
    throw new UsageError(
      flags.bench === undefined
        ? 'give at least one link: --serial PATH[:BAUD] or --ble'
        : `${flags.bench} has no box on a serial port or BLE (MQTT boxes need no gateway), and no --serial or --ble is given`,
    );
  const paths = new Set(serial.map((target) => target.path));
  if (paths.size !== serial.length) throw new UsageError('each --serial port may be given once');
  const answerTimeoutMs = integer('--answer-ms', flags.answerMs, 1, 600_000);
  const idleMs = integer('--ble-idle-ms', flags.bleIdleMs, 100, 3_600_000);
  const logger = createCliLogger(parseLogLevel(flags.logLevel), 'parkbench-gateway');
  let topics: Topics;
  try {
    topics = new Topics(flags.topicPrefix);
  } catch (error) {
    throw new UsageError(`--topic-prefix: ${messageOf(error)}`);
  }
  // Last of the checks, before any link: the file is made here.
  const capture = openCaptureFile(flags, 'gateway', logger);
  const queue = await DiskPublishQueue.open(
    flags.queueFile ?? join('data', `gateway-${flags.username}-queue.json`),
  ).catch((error: unknown) => {
    capture?.close();
    throw new CliError(messageOf(error));
  });
  const noble = ble
    ? await loadNoble().catch((error: unknown) => {
        capture?.close();
        return Promise.reject(new CliError(messageOf(error)));
      })
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
    ...(capture === undefined ? {} : { capture }),
  });
  try {
    await gateway.start();
  } catch (error) {
    await gateway.stop().catch(() => undefined);
    capture?.close();
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
  capture?.close();
  process.stdout.write(`parkbench gateway stopped ${JSON.stringify(gateway.snapshot())}\n`);
}

/** The serial ports and BLE MAC addresses of a bench file's boxes. */
function benchLinks(bench: BenchFile): { serial: SerialTarget[]; ble: string[] } {
  const serial: SerialTarget[] = [];
  const ble: string[] = [];
  for (const box of bench.boxes) {
    if (box.link.kind === 'serial') serial.push(box.link.target);
    else if (box.link.kind === 'ble') ble.push(box.link.mac);
  }
  return { serial, ble };
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
