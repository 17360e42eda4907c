// `parkbench admin box add|status|provision`: flags and output; the boxes'
// domain is api/boxes/.
import type { Command } from 'commander';
import type { NewBoxInput } from '../../api/boxes/add.js';
import { DEFAULT_OUTPUT_DIR, defaultOutput } from '../default-output.js';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseDirection, parseId, parseMac, parseModuleId } from './validate.js';

interface AddFlags extends CommonFlags {
  parking: string;
  moduleId: string;
  mac: string;
  direction: string;
  simulated?: boolean;
}

interface StatusFlags extends CommonFlags {
  moduleId?: string;
  parking?: string;
}

interface ProvisionFlags extends CommonFlags {
  moduleId: string;
  /** true: `--out` without a path. */
  out?: string | true;
}

export function registerBoxCommands(admin: Command): void {
  const group = admin.command('box').description('boxes (access-point modules)');
  withCommonFlags(
    group.command('add').description('register a box of a parking, with a fresh box key and MQTT password'),
  )
    .requiredOption('--parking <id>', 'the secured parking id')
    .requiredOption('--module-id <n>', 'the module id, a u32, unique')
    .requiredOption('--mac <address>', 'AA:BB:CC:DD:EE:FF, unique')
    .requiredOption('--direction <direction>', 'entrance or exit')
    .option(
      '--simulated',
      "a box parkbench's simulator plays (`parkbench start` runs it when it is in the demo parking); without it the box is hardware, never simulated",
    )
    .action(async (flags: AddFlags) => {
      const input: NewBoxInput = {
        parkingId: parseId('--parking', flags.parking),
        moduleId: parseModuleId(flags.moduleId),
        macAddress: parseMac(flags.mac),
        direction: parseDirection(flags.direction),
        simulated: flags.simulated === true,
      };
      const { addBox } = await import('../../api/boxes/add.js');
      await withDatabase(flags, async (ctx) => {
        printResult(
          flags,
          await addBox(ctx.store, input, ctx.now),
          'The MQTT password is shown only now; `box provision` issues a new one.',
        );
      });
    });

  withCommonFlags(
    group
      .command('status')
      .description('what each box last told the service in a verified response: when, battery, clock drift, sequences'),
  )
    .option('--module-id <n>', 'one box')
    .option('--parking <id>', 'the boxes of one parking')
    .action(async (flags: StatusFlags) => {
      const filter = {
        ...(flags.moduleId === undefined ? {} : { moduleId: parseModuleId(flags.moduleId) }),
        ...(flags.parking === undefined ? {} : { parkingId: parseId('--parking', flags.parking) }),
      };
      const { boxStatuses } = await import('../../api/operators/box-status.js');
      await withReadOnlyDatabase(flags, async (ctx) => {
        const statuses = await boxStatuses(ctx.store, filter, ctx.now);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
          return;
        }
        if (statuses.length === 0) process.stdout.write('no boxes\n');
        for (const status of statuses) {
          const seen =
            status.last_seen_at === null
              ? 'never seen (no verified response yet)'
              : `last seen ${status.last_seen_at}, battery ${status.battery_mv ?? '?'} mV, clock ${signed(status.box_time_drift_seconds)} s, box_seq ${status.last_box_seq ?? '?'}`;
          const availability =
            status.availability_reason === null
              ? status.availability
              : `${status.availability} (${status.availability_reason})`;
          process.stdout.write(
            `box ${status.module_id} (${status.direction}, parking ${status.parking_id}, ${status.simulated ? 'simulated' : 'real'}): ${availability}; ${seen}; next control sequence ${status.next_control_seq}\n`,
          );
          for (const missing of status.revocations_missing)
            process.stdout.write(
              `  AT RISK: revoked smart key ${missing.smart_key_id} still opens this box until ${missing.open_until} (${missing.last_error ?? 'its REVOKE did not reach the box'})\n`,
            );
          if (status.remedy !== null) process.stdout.write(`  remedy: ${status.remedy}\n`);
          for (const pending of status.pending_control_commands) {
            process.stdout.write(
              `  pending ${pending.kind} (${pending.purpose}) since ${pending.created_at}, ${pending.attempts} sends${pending.last_error === null ? '' : `, last: ${pending.last_error}`}\n`,
            );
          }
        }
      });
    });

  withCommonFlags(
    group.command('provision').description("print (or write) a box's provisioning file; issues a fresh MQTT password"),
  )
    .requiredOption('--module-id <n>', 'the module id')
    .option(
      '--out [file]',
      `write the file (mode 0600) instead of printing it; without a path, ${DEFAULT_OUTPUT_DIR}/box-<module_id>.json`,
    )
    .action(async (flags: ProvisionFlags) => {
      const moduleId = parseModuleId(flags.moduleId);
      const { mqttUrlOf, newProvisioning, provisioningText, writeProvisioning } =
        await import('../../api/boxes/provisioning.js');
      await withDatabase(flags, async (ctx) => {
        const store = ctx.store;
        const pending = await newProvisioning(store, moduleId, mqttUrlOf(ctx.config));
        if (flags.out === undefined) {
          await pending.store();
          process.stdout.write(provisioningText(pending.file));
          return;
        }
        const out = flags.out === true ? defaultOutput(`box-${moduleId}.json`) : flags.out;
        await writeProvisioning(store, out, pending);
        if (flags.json) printResult(flags, { module_id: moduleId, out });
        else
          process.stdout.write(
            `provisioning file of box ${moduleId} written to ${out} (mode 0600); the previous MQTT password no longer works\n`,
          );
      });
    });
}

function signed(value: number | null): string {
  if (value === null) return '?';
  return value > 0 ? `+${value}` : String(value);
}
