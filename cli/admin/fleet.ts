// `parkbench admin fleet provision`: many boxes at once for the simulator's
// fleet mode. Half entrance, half exit; one transaction, so a failure leaves
// no half-made fleet. A parking holds at most 32 boxes (the protocol's
// module list), so a larger fleet needs --create-parkings.
import { chmodSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { randomKeyHex, randomSecret } from '../../api/auth/secrets.js';
import { hashMqttPassword } from '../../api/mqtt/password-hash.js';
import { BoxRepository, MAX_BOXES_PER_PARKING, mqttUsernameFor, type Direction } from '../../api/repositories/boxes.js';
import { ParkingRepository, type ParkingRow } from '../../api/repositories/parkings.js';
import { CliError, UsageError } from '../errors.js';
import { provisioningFile, type ProvisioningFile } from '../../lib/provisioning-file.js';
import { freshParkingKeys } from '../../api/parkings/create.js';
import { mqttUrlOf } from './box.js';
import { printResult, withCommonFlags, withDatabase, type AdminContext, type CommonFlags } from './context.js';
import { parseId } from './validate.js';

const MAX_FLEET = 100_000;
const U32_MAX = 0xffffffff;

interface FleetFlags extends CommonFlags {
  parking: string;
  count: string;
  out: string;
  createParkings?: boolean;
}

export function provisionFleet(ctx: AdminContext, parkingId: number, count: number, createParkings: boolean): { files: ProvisioningFile[]; parkingIds: number[] } {
  const parkings = new ParkingRepository(ctx.db);
  const boxes = new BoxRepository(ctx.db);
  const first = parkings.findById(parkingId);
  if (first === undefined) throw new CliError(`no secured parking with id ${parkingId}`);
  const room = MAX_BOXES_PER_PARKING - boxes.countOf(parkingId);
  if (count > room && !createParkings) {
    throw new CliError(`secured parking ${parkingId} has room for ${room} more boxes (at most ${MAX_BOXES_PER_PARKING}): use --create-parkings to spread the fleet over new parkings like it`);
  }
  const nextModuleId = (ctx.db.prepare('SELECT coalesce(max(module_id), 99999) + 1 AS next FROM boxes').get() as { next: number }).next;
  if (nextModuleId + count - 1 > U32_MAX) throw new CliError('no room left for module ids (u32)');
  const url = mqttUrlOf(ctx);
  // Keys and password hashes first, outside the transaction: 0.1 ms a hash
  // is 10 s for the largest fleet, too long to hold the write lock while an
  // API shares the file (its writes would wait out busy_timeout and fail).
  const secrets = Array.from({ length: count }, () => {
    const password = randomSecret(24);
    return { boxKey: randomKeyHex(), password, mqttPasswordHash: hashMqttPassword(password) };
  });
  const files: ProvisioningFile[] = [];
  const parkingIds: number[] = [];
  ctx.db.transaction(() => {
    let parking: ParkingRow = first;
    let free = room;
    parkingIds.push(parking.id);
    for (let index = 0; index < count; index++) {
      if (free === 0) {
        const id = parkings.insert(
          {
            name: `${first.name} (fleet ${parkingIds.length + 1})`,
            description: first.description,
            currency: first.currency,
            pricePerHourMinor: first.price_per_hour_minor,
            maxDurationMinutes: first.max_duration_minutes,
            tries: first.tries,
            isOnline: first.is_online === 1,
            // Like the first parking, its access mode included; its own fresh keys.
            keys: freshParkingKeys(first.access_mode),
          },
          ctx.now,
        );
        parking = parkings.findById(id) ?? first;
        parkingIds.push(id);
        free = MAX_BOXES_PER_PARKING;
      }
      const moduleId = nextModuleId + index;
      const direction: Direction = index % 2 === 0 ? 'entrance' : 'exit';
      const macAddress = fleetMac(moduleId);
      if (boxes.findByMac(macAddress) !== undefined) throw new CliError(`MAC address ${macAddress} is already registered`);
      const { boxKey, password, mqttPasswordHash } = secrets[index] as (typeof secrets)[number];
      boxes.insert({ moduleId, parkingId: parking.id, direction, macAddress, boxKey, mqttPasswordHash }, ctx.now);
      free--;
      // Field for field what `box provision` gives each box (lib/provisioning-file.ts).
      files.push(
        provisioningFile(
          { module_id: moduleId, parking_id: parking.id, direction, mac_address: macAddress, box_key: boxKey, skew_seconds: 120, min_battery_mv: 3300 },
          parking,
          { url, username: mqttUsernameFor(moduleId), password },
        ),
      );
    }
  })();
  return { files, parkingIds };
}

/** A locally administered unicast MAC made of the module id, so two fleet
 * boxes never share one. */
function fleetMac(moduleId: number): string {
  const bytes = [0x02, 0x46, (moduleId >>> 24) & 0xff, (moduleId >>> 16) & 0xff, (moduleId >>> 8) & 0xff, moduleId & 0xff];
  return bytes.map((byte) => byte.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

export function registerFleetCommands(admin: Command): void {
  const fleet = admin.command('fleet').description('many boxes at once, for `parkbench sim --fleet`');
  withCommonFlags(fleet.command('provision').description('add N boxes to a parking (half entrance, half exit) and write their provisioning files as one JSON array'))
    .requiredOption('--parking <id>', 'the secured parking id')
    .requiredOption('--count <n>', `how many boxes (1 to ${MAX_FLEET})`)
    .requiredOption('--out <file>', 'the fleet file to write (mode 0600)')
    .option('--create-parkings', `spread boxes beyond the parking's room (${MAX_BOXES_PER_PARKING} boxes) over new parkings like it`)
    .action((flags: FleetFlags) => {
      const parkingId = parseId('--parking', flags.parking);
      const count = Number(flags.count);
      if (!/^\d+$/.test(flags.count) || count < 1 || count > MAX_FLEET) throw new UsageError(`--count must be an integer from 1 to ${MAX_FLEET}, got "${flags.count}"`);
      return withDatabase(flags, (ctx) => {
        const { files, parkingIds } = provisionFleet(ctx, parkingId, count, flags.createParkings === true);
        try {
          writeFileSync(flags.out, `${JSON.stringify(files, null, 2)}\n`, { mode: 0o600 });
          chmodSync(flags.out, 0o600);
        } catch (error) {
          throw new CliError(`cannot write ${flags.out}: ${(error as Error).message} (the boxes were added; \`parkbench admin box provision\` gives each file again)`);
        }
        printResult(flags, { count, parking_ids: parkingIds, first_module_id: files[0]?.module_id ?? null, last_module_id: files.at(-1)?.module_id ?? null, out: flags.out }, `Run them: parkbench sim --fleet ${flags.out}`);
      });
    });
}
