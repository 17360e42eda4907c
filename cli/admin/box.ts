// `parkbench admin box add|provision`.
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { randomKeyHex, randomSecret } from '../../api/auth/secrets.js';
import { hashMqttPassword } from '../../api/mqtt/password-hash.js';
import { BoxRepository, MAX_BOXES_PER_PARKING, mqttUsernameFor, type BoxRow, type Direction } from '../../api/repositories/boxes.js';
import { ParkingRepository } from '../../api/repositories/parkings.js';
import { provisioningFile, type ProvisioningFile } from '../../lib/provisioning-file.js';
import { CliError } from '../errors.js';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type AdminContext, type CommonFlags } from './context.js';
import { parseDirection, parseId, parseMac, parseModuleId } from './validate.js';
import { pendingControlOf, type PendingControl } from '../../api/control/operations.js';

export interface NewBoxInput {
  parkingId: number;
  moduleId: number;
  macAddress: string;
  direction: Direction;
}

export interface AddedBox {
  module_id: number;
  parking_id: number;
  direction: Direction;
  mac_address: string;
  box_key: string;
  mqtt_username: string;
  mqtt_password: string;
}

/** The provisioning file of docs/protocol.md, field for field (lib/provisioning-file.ts). */
export type { ProvisioningFile } from '../../lib/provisioning-file.js';

export function addBox(ctx: AdminContext, input: NewBoxInput): AddedBox {
  const boxes = new BoxRepository(ctx.db);
  if (!new ParkingRepository(ctx.db).findById(input.parkingId)) throw new CliError(`no secured parking with id ${input.parkingId}`);
  if (boxes.findByModuleId(input.moduleId)) throw new CliError(`module id ${input.moduleId} is already registered`);
  if (boxes.findByMac(input.macAddress)) throw new CliError(`MAC address ${input.macAddress} is already registered`);
  if (boxes.countOf(input.parkingId) >= MAX_BOXES_PER_PARKING) {
    throw new CliError(`secured parking ${input.parkingId} already has ${MAX_BOXES_PER_PARKING} boxes, the protocol's limit`);
  }
  const boxKey = randomKeyHex();
  const mqttPassword = randomSecret(24);
  const mqttPasswordHash = hashMqttPassword(mqttPassword);
  boxes.insert({ ...input, boxKey, mqttPasswordHash }, ctx.now);
  return {
    module_id: input.moduleId,
    parking_id: input.parkingId,
    direction: input.direction,
    mac_address: input.macAddress,
    box_key: boxKey,
    mqtt_username: mqttUsernameFor(input.moduleId),
    mqtt_password: mqttPassword,
  };
}

export function mqttUrlOf(ctx: AdminContext): string {
  const host = ctx.config.host.includes(':') ? `[${ctx.config.host}]` : ctx.config.host;
  return ctx.config.mqttUrl ?? `mqtt://${host}:${ctx.config.mqttPort}`;
}

/** Builds the provisioning file and stores its fresh MQTT password (only its
 * hash is kept, so the previous password stops working). */
export function provisionBox(ctx: AdminContext, moduleId: number): ProvisioningFile {
  const { file, store } = newProvisioning(ctx, moduleId);
  store();
  return file;
}

/** Builds the provisioning file with a fresh MQTT password, stored only when
 * `store` runs (see writeProvisioning). */
function newProvisioning(ctx: AdminContext, moduleId: number): { file: ProvisioningFile; store: () => void } {
  const boxes = new BoxRepository(ctx.db);
  const box = boxes.findByModuleId(moduleId);
  if (!box) throw new CliError(`no box with module id ${moduleId}`);
  const parking = new ParkingRepository(ctx.db).findById(box.parking_id);
  if (!parking) throw new CliError(`box ${moduleId} belongs to a missing parking ${box.parking_id}`);
  const password = randomSecret(24);
  const hash = hashMqttPassword(password);
  // Its keys by the rule of lib/provisioning-file.ts: a signed parking's box
  // gets issuer public keys and no parking key; never a private key.
  const file = provisioningFile(box, parking, { url: mqttUrlOf(ctx), username: box.mqtt_username, password });
  return { file, store: () => boxes.setMqttPasswordHash(moduleId, hash) };
}

/**
 * Writes the provisioning file and stores its password's hash, both or
 * neither: a box whose new password was stored but never written out would be
 * locked out (issue 12). The file goes to a temporary file beside `out`
 * (flushed, mode 0600), then the hash is stored and the file renamed into
 * place in one transaction: a failed rename rolls the hash back.
 */
function writeProvisioning(ctx: AdminContext, out: string, text: string, store: () => void): void {
  const temporary = join(dirname(out), `.${basename(out)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = openSync(temporary, 'wx', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    ctx.db.transaction(() => {
      store();
      renameSync(temporary, out);
    })();
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Never made, or already renamed.
    }
    throw new CliError(`cannot write ${out}: ${error instanceof Error ? error.message : String(error)} (nothing changed: the box keeps its MQTT password)`);
  }
}

interface AddFlags extends CommonFlags {
  parking: string;
  moduleId: string;
  mac: string;
  direction: string;
}

interface StatusFlags extends CommonFlags {
  moduleId?: string;
  parking?: string;
}

/** What a box last told the service in a verified response (docs/protocol.md, Response frame):
 * when, its battery, how far its clock is off, its sequences. */
export interface BoxStatus {
  module_id: number;
  parking_id: number;
  direction: Direction;
  last_seen_at: string | null;
  battery_mv: number | null;
  box_time_drift_seconds: number | null;
  last_box_seq: number | null;
  last_control_seq: number | null;
  next_control_seq: number;
  /** Control commands queued for the box, not answered yet (api/control/). */
  pending_control_commands: PendingControl[];
}

export function boxStatuses(ctx: AdminContext, filter: { moduleId?: number; parkingId?: number }): BoxStatus[] {
  const boxes = new BoxRepository(ctx.db);
  let rows: BoxRow[];
  if (filter.moduleId !== undefined) {
    const box = boxes.findByModuleId(filter.moduleId);
    if (!box) throw new CliError(`no box with module id ${filter.moduleId}`);
    rows = [box];
  } else if (filter.parkingId !== undefined) {
    if (!new ParkingRepository(ctx.db).findById(filter.parkingId)) throw new CliError(`no secured parking with id ${filter.parkingId}`);
    rows = boxes.listOfParking(filter.parkingId);
  } else {
    rows = boxes.listAll();
  }
  return rows.map((box) => {
    const learned = boxes.learned(box.module_id);
    return {
      module_id: box.module_id,
      parking_id: box.parking_id,
      direction: box.direction,
      last_seen_at: learned?.last_seen_at === undefined || learned.last_seen_at === null ? null : new Date(learned.last_seen_at).toISOString(),
      battery_mv: learned?.battery_mv ?? null,
      box_time_drift_seconds: learned?.box_time_drift_seconds ?? null,
      last_box_seq: learned?.last_box_seq ?? null,
      last_control_seq: learned?.last_control_seq ?? null,
      next_control_seq: learned?.next_control_seq ?? box.next_control_seq,
      pending_control_commands: pendingControlOf(ctx.db, box.module_id),
    };
  });
}

interface ProvisionFlags extends CommonFlags {
  moduleId: string;
  out?: string;
}

export function registerBoxCommands(admin: Command): void {
  const group = admin.command('box').description('boxes (access-point modules)');
  withCommonFlags(group.command('add').description('register a box of a parking, with a fresh box key and MQTT password'))
    .requiredOption('--parking <id>', 'the secured parking id')
    .requiredOption('--module-id <n>', 'the module id, a u32, unique')
    .requiredOption('--mac <address>', 'AA:BB:CC:DD:EE:FF, unique')
    .requiredOption('--direction <direction>', 'entrance or exit')
    .action((flags: AddFlags) => {
      const input: NewBoxInput = {
        parkingId: parseId('--parking', flags.parking),
        moduleId: parseModuleId(flags.moduleId),
        macAddress: parseMac(flags.mac),
        direction: parseDirection(flags.direction),
      };
      return withDatabase(flags, (ctx) => {
        printResult(flags, addBox(ctx, input), 'The MQTT password is shown only now; `box provision` issues a new one.');
      });
    });

  withCommonFlags(group.command('status').description('what each box last told the service in a verified response: when, battery, clock drift, sequences'))
    .option('--module-id <n>', 'one box')
    .option('--parking <id>', 'the boxes of one parking')
    .action((flags: StatusFlags) => {
      const filter = {
        ...(flags.moduleId === undefined ? {} : { moduleId: parseModuleId(flags.moduleId) }),
        ...(flags.parking === undefined ? {} : { parkingId: parseId('--parking', flags.parking) }),
      };
      return withReadOnlyDatabase(flags, (ctx) => {
        const statuses = boxStatuses(ctx, filter);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
          return;
        }
        if (statuses.length === 0) process.stdout.write('no boxes\n');
        for (const status of statuses) {
          const seen = status.last_seen_at === null ? 'never seen (no verified response yet)' : `last seen ${status.last_seen_at}, battery ${status.battery_mv ?? '?'} mV, clock ${signed(status.box_time_drift_seconds)} s, box_seq ${status.last_box_seq ?? '?'}`;
          process.stdout.write(`box ${status.module_id} (${status.direction}, parking ${status.parking_id}): ${seen}; next control sequence ${status.next_control_seq}\n`);
          for (const pending of status.pending_control_commands) {
            process.stdout.write(`  pending ${pending.kind} (${pending.purpose}) since ${pending.created_at}, ${pending.attempts} sends${pending.last_error === null ? '' : `, last: ${pending.last_error}`}\n`);
          }
        }
      });
    });

  withCommonFlags(group.command('provision').description("print (or write) a box's provisioning file; issues a fresh MQTT password"))
    .requiredOption('--module-id <n>', 'the module id')
    .option('--out <file>', 'write the file (mode 0600) instead of printing it')
    .action((flags: ProvisionFlags) => {
      const moduleId = parseModuleId(flags.moduleId);
      return withDatabase(flags, (ctx) => {
        const { file, store } = newProvisioning(ctx, moduleId);
        const text = `${JSON.stringify(file, null, 2)}\n`;
        if (flags.out === undefined) {
          store();
          process.stdout.write(text);
          return;
        }
        writeProvisioning(ctx, flags.out, text, store);
        if (flags.json) printResult(flags, { module_id: moduleId, out: flags.out });
        else process.stdout.write(`provisioning file of box ${moduleId} written to ${flags.out} (mode 0600); the previous MQTT password no longer works\n`);
      });
    });
}

function signed(value: number | null): string {
  if (value === null) return '?';
  return value > 0 ? `+${value}` : String(value);
}
