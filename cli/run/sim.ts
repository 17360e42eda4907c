// `parkbench sim`, its flags read (commands/sim.ts): checks them, loads the
// provisioning files, starts the boxes on their links, says ready, switches
// their power as --power-file says, and stops them on a signal.
import { MIN_BLE_MTU } from '../../firmware-protocol/index.js';
import { scaledClock, systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseSerialTarget } from '../../lib/serial-target.js';
import { FIRMWARE_BUGS, isFirmwareBug, type FirmwareBug } from '../../simulator/firmware-bug-names.js';
import { loadFleetFile, type FleetMember } from '../../simulator/fleet-file.js';
import { parseSimSet, SimSetError, type SimSetCommand } from '../../lib/sim-set.js';
import { loadProvisioningFile, ProvisioningError, type Provisioning } from '../../lib/provisioning-file.js';
import { Simulation, SimulationError, type SimulationOptions } from '../../simulator/simulation.js';
import { CliError, UsageError } from '../errors.js';
import { createCliLogger, parseLogLevel } from '../logger.js';
import { onShutdown } from '../signals.js';
import { ReadyFile } from '../ready-file.js';
import { messageOf } from '../../lib/message-of.js';
import { openCaptureFile, type CaptureFlags } from '../capture-flags.js';
import { PowerFile, type PowerState } from '../../simulator/power-file.js';
import type { EnduranceFaults } from '../../simulator/faults.js';

export interface SimFlags extends CaptureFlags {
  box?: string;
  fleet?: string;
  mqtt?: string;
  mqttUsername?: string;
  mqttPassword?: string;
  topicPrefix: string;
  serial?: string;
  ble?: boolean;
  bleMtu: string;
  direction?: string;
  skewSeconds?: string;
  minBatteryMv?: string;
  stateDir: string;
  memoryState?: boolean;
  speed: string;
  openingMs: string;
  openHoldMs: string;
  closingMs: string;
  carPassMs?: string;
  drop?: string;
  corrupt?: string;
  delayMs?: string;
  jam?: boolean;
  jamEvery?: string;
  batteryDrainMv?: string;
  powerFile?: string;
  batteryMv?: string;
  clockOffsetS?: string;
  driftPpm?: string;
  bug: string[];
  logLevel: string;
  readyFile?: string;
  exitWithParent: boolean;
}

export async function runSim(flags: SimFlags): Promise<void> {
  if ((flags.box === undefined) === (flags.fleet === undefined))
    throw new UsageError('give exactly one of --box FILE or --fleet FILE');
  const logLevel = parseLogLevel(flags.logLevel);
  // Power loss keeps only what was persisted: with nothing persisted, a power cycle is a new box.
  if (flags.powerFile !== undefined && flags.memoryState === true)
    throw new UsageError('--power-file needs state that survives power loss: drop --memory-state');
  // A file left by a run that was killed must not say ready for this one.
  const readyFile = flags.readyFile === undefined ? undefined : await ReadyFile.claim(flags.readyFile);
  const fleet = flags.fleet !== undefined;
  const members = await loadMembers(flags);
  const speed = number('--speed', flags.speed, 0.001, 1_000_000);
  const clock = scaledClock(speed, systemClock);
  const serial = flags.serial === undefined ? undefined : serialTarget(flags.serial);
  const useMqtt = flags.mqtt !== undefined || (serial === undefined && flags.ble !== true);
  const carPassMs =
    flags.carPassMs === undefined
      ? fleet
        ? 3_000
        : undefined
      : number('--car-pass-ms', flags.carPassMs, 0, 3_600_000);
  const logger = createCliLogger(logLevel, 'parkbench-sim');
  let topics: Topics;
  try {
    topics = new Topics(flags.topicPrefix);
  } catch (error) {
    throw new UsageError(`--topic-prefix: ${messageOf(error)}`);
  }
  const settings = settingsFromFlags(flags);
  const barrierTimings = {
    openingMs: number('--opening-ms', flags.openingMs, 0, 600_000),
    openHoldMs: number('--open-hold-ms', flags.openHoldMs, 0, 3_600_000),
    closingMs: number('--closing-ms', flags.closingMs, 0, 600_000),
  };
  const firmwareBugs = bugs(flags.bug);
  const endurance = enduranceFromFlags(flags);
  const bleMtu = flags.ble === true ? number('--ble-mtu', flags.bleMtu, MIN_BLE_MTU, 517) : undefined;
  // Last of the checks, before any link: the file is made here.
  const capture = openCaptureFile(flags, 'sim', logger);
  const options: SimulationOptions = {
    members,
    clock,
    stateDir: flags.memoryState === true ? null : flags.stateDir,
    settings,
    barrierTimings,
    bugs: firmwareBugs,
    endurance,
    logger,
    ...(capture === undefined ? {} : { capture }),
    ...(carPassMs === undefined ? {} : { carPassDelayMs: carPassMs }),
    ...(serial === undefined ? {} : { serial }),
    ...(bleMtu === undefined ? {} : { ble: { mtu: bleMtu, serve: true } }),
    ...(useMqtt
      ? {
          mqtt: {
            topics,
            ...(flags.mqtt === undefined ? {} : { url: mqttUrl(flags.mqtt) }),
            ...(flags.mqttUsername === undefined ? {} : { username: flags.mqttUsername }),
            ...(flags.mqttPassword === undefined ? {} : { password: flags.mqttPassword }),
          },
        }
      : {}),
    onProgress: (connected, total) => {
      if (total > 1 && (connected === total || connected % 100 === 0))
        process.stderr.write(`connecting boxes: ${connected}/${total}\n`);
    },
  };
  // Listening before saying ready: whoever reads the ready line may signal at once.
  const stopping = onShutdown({ exitWithParent: flags.exitWithParent });
  let simulation: Simulation | undefined;
  let poweredOn: (() => void) | undefined;
  let power: PowerFile | undefined;
  if (flags.powerFile !== undefined) {
    const path = flags.powerFile;
    const switched = (state: PowerState): void => {
      if (simulation === undefined) {
        if (state === 'on') poweredOn?.();
        return;
      }
      simulation.setPower(state === 'on').then(
        () => process.stdout.write(`parkbench sim power ${state}\n`),
        (error: unknown) => process.stderr.write(`power ${state} failed: ${messageOf(error)}\n`),
      );
    };
    power = await PowerFile.watch({
      path,
      clock: systemClock,
      onChange: switched,
      onWarning: (line) => process.stderr.write(`${line}\n`),
    }).catch((error: unknown) => {
      capture?.close();
      throw new CliError(`cannot read --power-file ${path}: ${messageOf(error)}`);
    });
    if (power.state === 'off') {
      // A box without power does not start: it starts (and says ready) once the file says on.
      process.stdout.write('parkbench sim power off: waiting for on\n');
      const on = new Promise<void>((resolve) => (poweredOn = resolve));
      if ((await Promise.race([on.then(() => 'on' as const), stopping])) !== 'on') {
        power.close();
        capture?.close();
        return;
      }
      process.stdout.write('parkbench sim power on\n');
    }
  }
  try {
    simulation = await Simulation.start(options);
  } catch (error) {
    power?.close();
    capture?.close();
    if (error instanceof SimulationError) throw new CliError(error.message);
    throw new CliError(`cannot start the simulation: ${messageOf(error)}`);
  }
  // Switched off while the boxes were coming up: off they go now.
  if (power?.state === 'off') {
    await simulation.setPower(false);
    process.stdout.write('parkbench sim power off\n');
  }
  const links = [
    useMqtt ? 'mqtt' : undefined,
    serial === undefined ? undefined : 'serial',
    flags.ble === true ? 'ble' : undefined,
  ].filter((link) => link !== undefined);
  const ready = { boxes: members.map((member) => member.provisioning.moduleId), links, speed };
  try {
    await readyFile?.write({
      pid: process.pid,
      ...ready,
      ...(serial === undefined ? {} : { serial: serial.path }),
      ...(flags.mqtt === undefined ? {} : { mqtt: flags.mqtt }),
    });
  } catch (error) {
    power?.close();
    await simulation.stop();
    capture?.close();
    throw new CliError(`cannot write --ready-file ${flags.readyFile ?? ''}: ${messageOf(error)}`);
  }
  process.stdout.write(`parkbench sim ready ${JSON.stringify(ready)}\n`);
  await stopping;
  power?.close();
  await readyFile?.remove();
  await simulation.stop();
  capture?.close();
  process.stdout.write(`parkbench sim stopped ${JSON.stringify(simulation.summary())}\n`);
}

async function loadMembers(flags: SimFlags): Promise<FleetMember[]> {
  try {
    const members =
      flags.fleet !== undefined
        ? await loadFleetFile(flags.fleet)
        : [{ provisioning: await loadProvisioningFile(flags.box ?? ''), settings: {} }];
    return members.map((member) => ({ ...member, provisioning: withOverrides(member.provisioning, flags) }));
  } catch (error) {
    if (error instanceof ProvisioningError) throw new UsageError(`${flags.fleet ?? flags.box ?? ''}: ${error.message}`);
    throw error;
  }
}

function withOverrides(provisioning: Provisioning, flags: SimFlags): Provisioning {
  let direction = provisioning.direction;
  if (flags.direction !== undefined) {
    if (flags.direction !== 'entrance' && flags.direction !== 'exit')
      throw new UsageError(`--direction must be entrance or exit, got "${flags.direction}"`);
    direction = flags.direction;
  }
  return {
    ...provisioning,
    direction,
    ...(flags.skewSeconds === undefined ? {} : { skewSeconds: number('--skew-seconds', flags.skewSeconds, 0, 86_400) }),
    ...(flags.minBatteryMv === undefined
      ? {}
      : { minBatteryMv: number('--min-battery-mv', flags.minBatteryMv, 0, 0xffff) }),
  };
}

/** The fault and setting flags, checked by the same rules as sim/set. */
function settingsFromFlags(flags: SimFlags): SimSetCommand {
  const document: Record<string, unknown> = {};
  const numeric = (name: string, flag: string, raw: string | undefined): void => {
    if (raw === undefined) return;
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) throw new UsageError(`${flag} must be a number, got "${raw}"`);
    document[name] = value;
  };
  numeric('drop_commands', '--drop', flags.drop);
  numeric('corrupt_responses', '--corrupt', flags.corrupt);
  numeric('delay_ms', '--delay-ms', flags.delayMs);
  numeric('battery_mv', '--battery-mv', flags.batteryMv);
  numeric('clock_offset_seconds', '--clock-offset-s', flags.clockOffsetS);
  numeric('drift_ppm', '--drift-ppm', flags.driftPpm);
  if (flags.jam === true) document.jam = true;
  try {
    return parseSimSet(document);
  } catch (error) {
    if (error instanceof SimSetError) throw new UsageError(`bad fault flag: ${error.message}`);
    throw error;
  }
}

/** The endurance faults of the flags: whole numbers, 0 meaning none. */
function enduranceFromFlags(flags: SimFlags): Partial<EnduranceFaults> {
  return {
    ...(flags.batteryDrainMv === undefined
      ? {}
      : { batteryDrainMv: integer('--battery-drain-mv', flags.batteryDrainMv, 0, 0xffff) }),
    ...(flags.jamEvery === undefined ? {} : { jamEvery: integer('--jam-every', flags.jamEvery, 1, 1_000_000) }),
  };
}

function bugs(names: readonly string[]): FirmwareBug[] {
  return names.map((name) => {
    if (!isFirmwareBug(name)) throw new UsageError(`--bug must be one of ${FIRMWARE_BUGS.join(', ')}, got "${name}"`);
    return name;
  });
}

function serialTarget(raw: string) {
  try {
    return parseSerialTarget(raw);
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
}

function mqttUrl(raw: string): string {
  if (!/^(mqtts?|wss?|tcp):\/\/[^\s]+$/.test(raw)) throw new UsageError(`--mqtt must be an mqtt:// URL, got "${raw}"`);
  return raw;
}

function number(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max)
    throw new UsageError(`${flag} must be a number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || value < min || value > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}
