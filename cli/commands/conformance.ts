// `parkbench conformance`: run the box conformance suite (conformance/)
// against one box on a serial port, over BLE or over MQTT, and report as a
// table, JSON and/or JUnit XML. Exit 0 only when every case passed.
import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseSerialTarget, type SerialTarget } from '../../lib/serial-target.js';
import { loadNoble } from '../../gateway/ble/noble.js';
import { loadProvisioningFile, ProvisioningError, type Provisioning } from '../../simulator/provisioning.js';
import { boxUnderTest } from '../../conformance/box-under-test.js';
import type { BoxTarget } from '../../conformance/box-target.js';
import { passedAll } from '../../conformance/case-result.js';
import { renderJson } from '../../conformance/reports/json.js';
import { renderJunit } from '../../conformance/reports/junit.js';
import { renderTable } from '../../conformance/reports/table.js';
import { runSuite } from '../../conformance/run-suite.js';
import { BleBoxTarget } from '../../conformance/targets/ble-box-target.js';
import { MqttBoxTarget } from '../../conformance/targets/mqtt-box-target.js';
import { SerialBoxTarget } from '../../conformance/targets/serial-box-target.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { createCliLogger, parseLogLevel } from '../logger.js';

interface ConformanceFlags {
  box?: string;
  serial?: string;
  ble?: string;
  mqtt?: string;
  moduleId?: string;
  username?: string;
  password?: string;
  topicPrefix: string;
  answerMs: string;
  cycleMs: string;
  controlSeq?: string;
  skipWearing?: boolean;
  json?: boolean;
  junit?: string;
  logLevel: string;
}

type TargetChoice = { kind: 'serial'; target: SerialTarget } | { kind: 'ble'; mac: string } | { kind: 'mqtt'; url: string; moduleId: number | undefined; username?: string; password?: string; topics: Topics };

export function registerConformanceCommand(program: Command): void {
  program
    .command('conformance')
    .description("Run the box conformance suite against one box (a real one on a bench, or a simulated one)")
    .option('--box <file>', "the box's provisioning file: its keys, so the suite seals its own commands")
    .option('--serial <path[:baud]>', 'the box is on this serial port (default 115200 baud)')
    .option('--ble <mac>', 'the box is reached over BLE at this MAC address (noble; NOBLE_WEBSOCKET=1 for `parkbench sim --ble`)')
    .option('--mqtt <url>', "the box is reached through this broker (a simulated box, or a real one behind a gateway)")
    .option('--module-id <n>', "with --mqtt: the box's module_id (default: the provisioning file's)")
    .option('--username <name>', 'with --mqtt: MQTT username (an operator account)')
    .option('--password <password>', 'with --mqtt: MQTT password')
    .option('--topic-prefix <prefix>', 'with --mqtt: first MQTT topic level', process.env.MQTT_TOPIC_PREFIX ?? 'parkbench')
    .option('--answer-ms <ms>', 'longest time the box may take to answer a command', '2000')
    .option('--cycle-ms <ms>', 'longest time for the barrier to show OPENING then CLOSED after a valid ACCESS', '30000')
    .option('--control-seq <n>', 'first control sequence, going up by one (default: the current Unix time in seconds)')
    .option('--skip-wearing', 'skip the cases marked wearing (they move a real barrier or spend tries many times)')
    .option('--json', 'print the results and a summary as JSON instead of the table')
    .option('--junit <file>', 'also write the results as JUnit XML to this file')
    .option('--log-level <level>', 'logs of the links, on stderr: fatal, error, warn, info, debug, trace or silent', 'warn')
    .action(async (flags: ConformanceFlags) => {
      await runConformance(flags);
    });
}

async function runConformance(flags: ConformanceFlags): Promise<void> {
  const choice = targetChoice(flags);
  const answerMs = integer('--answer-ms', flags.answerMs, 1, 600_000);
  const cycleMs = integer('--cycle-ms', flags.cycleMs, 1, 3_600_000);
  const controlSeq = flags.controlSeq === undefined ? Math.floor(systemClock.now() / 1000) : integer('--control-seq', flags.controlSeq, 1, 0xffff_0000);
  const logger = createCliLogger(parseLogLevel(flags.logLevel), 'parkbench-conformance');
  if (flags.box === undefined) throw new UsageError("--box FILE is required: the box's provisioning file");
  const provisioning = await loadBox(flags.box);
  if (choice.kind === 'mqtt' && choice.moduleId !== undefined && choice.moduleId !== provisioning.moduleId) {
    throw new UsageError(`--module-id ${choice.moduleId} is not the module_id of ${flags.box} (${provisioning.moduleId})`);
  }
  const box = boxUnderTest(provisioning);
  const target = await openTarget(choice, provisioning, cycleMs, logger);
  let report;
  try {
    report = await runSuite({
      box,
      target,
      clock: systemClock,
      settings: { answerMs, cycleMs, controlSeq, keyIdBase: randomInt(1, 0xffff_0000) },
      skipWearing: flags.skipWearing === true,
    });
  } finally {
    await target.close().catch(() => undefined);
  }
  process.stdout.write(flags.json === true ? renderJson(report) : renderTable(report));
  if (flags.junit !== undefined) {
    await writeFile(flags.junit, renderJunit(report)).catch((error: unknown) => {
      throw new CliError(`cannot write ${flags.junit}: ${(error as Error).message}`);
    });
  }
  if (!passedAll(report)) process.exitCode = ExitCode.failure;
}

function targetChoice(flags: ConformanceFlags): TargetChoice {
  const given = [flags.serial, flags.ble, flags.mqtt].filter((value) => value !== undefined).length;
  if (given !== 1) throw new UsageError('give exactly one target: --serial PATH[:BAUD], --ble MAC or --mqtt URL');
  if (flags.mqtt === undefined && (flags.moduleId !== undefined || flags.username !== undefined || flags.password !== undefined)) {
    throw new UsageError('--module-id, --username and --password go with --mqtt');
  }
  if (flags.serial !== undefined) {
    try {
      return { kind: 'serial', target: parseSerialTarget(flags.serial) };
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  if (flags.ble !== undefined) {
    const mac = flags.ble.trim().toUpperCase();
    if (!/^[0-9A-F]{2}(:[0-9A-F]{2}){5}$/.test(mac)) throw new UsageError(`--ble wants a MAC address like AA:BB:CC:DD:EE:FF, got "${flags.ble}"`);
    return { kind: 'ble', mac };
  }
  const url = flags.mqtt ?? '';
  if (!/^(mqtts?|wss?|tcp):\/\/\S+$/.test(url)) throw new UsageError(`--mqtt must be an mqtt:// URL, got "${url}"`);
  let topics: Topics;
  try {
    topics = new Topics(flags.topicPrefix);
  } catch (error) {
    throw new UsageError(`--topic-prefix: ${(error as Error).message}`);
  }
  const moduleId = flags.moduleId === undefined ? undefined : integer('--module-id', flags.moduleId, 0, 0xffffffff);
  return { kind: 'mqtt', url, moduleId, topics, ...(flags.username === undefined ? {} : { username: flags.username }), ...(flags.password === undefined ? {} : { password: flags.password }) };
}

async function loadBox(path: string): Promise<Provisioning> {
  try {
    return await loadProvisioningFile(path);
  } catch (error) {
    if (error instanceof ProvisioningError) throw new UsageError(`${path}: ${error.message}`);
    throw error;
  }
}

async function openTarget(choice: TargetChoice, provisioning: Provisioning, cycleMs: number, logger: ReturnType<typeof createCliLogger>): Promise<BoxTarget> {
  let target: BoxTarget;
  switch (choice.kind) {
    case 'serial':
      target = new SerialBoxTarget({ target: choice.target, boxKey: provisioning.boxKey, clock: systemClock, logger });
      break;
    case 'ble': {
      const noble = await loadNoble().catch((error: unknown) => Promise.reject(new CliError((error as Error).message)));
      // Status reports come only while connected: stay connected through a barrier cycle.
      target = new BleBoxTarget({ noble, mac: choice.mac, moduleId: provisioning.moduleId, boxKey: provisioning.boxKey, clock: systemClock, logger, idleMs: cycleMs + 60_000 });
      break;
    }
    case 'mqtt':
      target = new MqttBoxTarget({
        url: choice.url,
        moduleId: provisioning.moduleId,
        topics: choice.topics,
        clock: systemClock,
        ...(choice.username === undefined ? {} : { username: choice.username }),
        ...(choice.password === undefined ? {} : { password: choice.password }),
      });
      break;
  }
  try {
    await target.open();
  } catch (error) {
    await target.close().catch(() => undefined);
    throw new CliError(`cannot reach the box over ${choice.kind}: ${(error as Error).message}`);
  }
  return target;
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}
