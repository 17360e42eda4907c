// `parkbench admin fleet provision`: flags, the fleet file and output; the
// fleet itself is made by api/boxes/fleet.ts.
import type { Command } from 'commander';
import { MAX_BOXES_PER_PARKING, MAX_FLEET } from '../../api/boxes/limits.js';
import { CliError, UsageError } from '../errors.js';
import { DEFAULT_OUTPUT_DIR, defaultOutput } from '../default-output.js';
import { printResult, withCommonFlags, withDatabase, type CommonFlags } from './context.js';
import { parseId } from './validate.js';
import { checkReplaceable, writeFileAtomic } from '../../lib/atomic-file.js';
import { messageOf } from '../../lib/message-of.js';

interface FleetFlags extends CommonFlags {
  parking: string;
  count: string;
  /** Absent or true (`--out` without a path): data/fleet.json. */
  out?: string | true;
  createParkings?: boolean;
}

export function registerFleetCommands(admin: Command): void {
  const fleet = admin.command('fleet').description('many boxes at once, for `parkbench sim --fleet`');
  withCommonFlags(
    fleet
      .command('provision')
      .description(
        'add N boxes to a parking (half entrance, half exit) and write their provisioning files as one JSON array',
      ),
  )
    .requiredOption('--parking <id>', 'the secured parking id')
    .requiredOption('--count <n>', `how many boxes (1 to ${MAX_FLEET})`)
    .option('--out [file]', `the fleet file to write (mode 0600; default ${DEFAULT_OUTPUT_DIR}/fleet.json)`)
    .option(
      '--create-parkings',
      `spread boxes beyond the parking's room (${MAX_BOXES_PER_PARKING} boxes) over new parkings like it`,
    )
    .action(async (flags: FleetFlags) => {
      const parkingId = parseId('--parking', flags.parking);
      const count = Number(flags.count);
      if (!/^\d+$/.test(flags.count) || count < 1 || count > MAX_FLEET)
        throw new UsageError(`--count must be an integer from 1 to ${MAX_FLEET}, got "${flags.count}"`);
      const out = flags.out === undefined || flags.out === true ? defaultOutput('fleet.json') : flags.out;
      // Before any box is added: a path that is no regular file is refused (exit 2).
      checkReplaceable(out);
      const [{ provisionFleet }, { mqttUrlOf }] = await Promise.all([
        import('../../api/boxes/fleet.js'),
        import('../../api/boxes/provisioning.js'),
      ]);
      await withDatabase(flags, async (ctx) => {
        const { files, parkingIds } = await provisionFleet(
          ctx.store,
          { parkingId, count, createParkings: flags.createParkings === true, mqttUrl: mqttUrlOf(ctx.config) },
          ctx.now,
        );
        try {
          await writeFileAtomic(out, `${JSON.stringify(files, null, 2)}\n`, { mode: 0o600 });
        } catch (error) {
          throw new CliError(
            `cannot write ${out}: ${messageOf(error)} (the boxes were added; \`parkbench admin box provision\` gives each file again)`,
          );
        }
        printResult(
          flags,
          {
            count,
            parking_ids: parkingIds,
            first_module_id: files[0]?.module_id ?? null,
            last_module_id: files.at(-1)?.module_id ?? null,
            out,
          },
          `Run them: parkbench sim --fleet ${out}`,
        );
      });
    });
}
