// `parkbench admin parking set-access|rotate-issuer`: a parking's access
// mode and issuer key, moved on its boxes by SET_ISSUER (api/control/).
import type { Command } from 'commander';
import type { AccessResult, ControlDeps } from '../../api/control/operations.js';
import { UsageError } from '../errors.js';
import { printResult, withCommonFlags, withDatabase, type CommonFlags } from './context.js';
import {
  controlDeps,
  deliveryLines,
  exitWith,
  waitForAnswers,
  waitSeconds,
  withWaitFlag,
  type WaitFlags,
} from './control-report.js';
import { parseId } from './validate.js';

interface SetAccessFlags extends CommonFlags, WaitFlags {
  id: string;
  access: string;
  force?: boolean;
}

interface RotateFlags extends CommonFlags, WaitFlags {
  id: string;
  reSign?: boolean;
}

/** Adds the subcommands to `admin parking` (registered by cli/admin/parking.ts). */
export function registerParkingAccessCommands(admin: Command): void {
  const group =
    admin.commands.find((command) => command.name() === 'parking') ??
    admin.command('parking').description('secured parkings');

  withWaitFlag(
    withCommonFlags(
      group
        .command('set-access')
        .description(
          'move a sealed parking to signed: a new issuer key on every box, then smart keys are signed with it',
        ),
    ),
  )
    .requiredOption('--id <n>', 'the secured parking id')
    .requiredOption('--access <mode>', 'signed (a signed parking does not go back to sealed)')
    .option('--force', 'sign smart keys with the new key at once, before every box has it')
    .action(async (flags: SetAccessFlags) => {
      const parkingId = parseId('--id', flags.id);
      if (flags.access !== 'signed' && flags.access !== 'sealed')
        throw new UsageError(`--access must be signed or sealed, got "${flags.access}"`);
      const access = flags.access;
      const seconds = waitSeconds(flags);
      const { refuseSetAccessSealed, setAccessSigned } = await import('../../api/control/operations.js');
      await withDatabase(flags, async (ctx) => {
        // A refusal is a domain error: cli/main.ts prints its one line (exit 1).
        const deps = controlDeps(ctx.store);
        const started =
          access === 'sealed'
            ? await refuseSetAccessSealed(deps.store, parkingId)
            : await setAccessSigned(
                deps,
                parkingId,
                { force: flags.force === true },
                ctx.now,
                `admin parking set-access --id ${parkingId} --access signed${flags.force === true ? ' --force' : ''}`,
              );
        await report(deps, flags, started, seconds);
      });
    });

  withWaitFlag(
    withCommonFlags(
      group
        .command('rotate-issuer')
        .description(
          "rotate a signed parking's issuer key (SET_ISSUER(new, current) to every box, then sign with the new key)",
        ),
    ),
  )
    .requiredOption('--id <n>', 'the secured parking id')
    .option(
      '--re-sign',
      'sign the live smart keys again with the new key, so the previous key leaves the boxes at once and every signature it made (revoked keys included) opens nothing; phones fetch their key again',
    )
    .action(async (flags: RotateFlags) => {
      const parkingId = parseId('--id', flags.id);
      const seconds = waitSeconds(flags);
      const reSign = flags.reSign === true;
      const { rotateIssuer } = await import('../../api/control/operations.js');
      await withDatabase(flags, async (ctx) => {
        const deps = controlDeps(ctx.store);
        const started = await rotateIssuer(
          deps,
          parkingId,
          ctx.now,
          `admin parking rotate-issuer --id ${parkingId}${reSign ? ' --re-sign' : ''}`,
          { reSign },
        );
        await report(deps, flags, started, seconds);
      });
    });
}

/** Waits for the answers, then prints where the parking stands and each box. */
async function report(
  { store }: ControlDeps,
  flags: CommonFlags,
  started: AccessResult,
  seconds: number,
): Promise<void> {
  const deliveries = await waitForAnswers(store, started.operation, seconds);
  const { accessStateOf } = await import('../../api/control/operations.js');
  const state = await accessStateOf(store, started.parking_id);
  const result = {
    parking_id: started.parking_id,
    access_mode: state?.access_mode ?? started.access_mode,
    issuer_public_key: state?.issuer_public_key ?? null,
    issuer_previous_public_key: state?.issuer_previous_public_key ?? null,
    switching: state?.switching ?? false,
    done: deliveries.done,
    pending: deliveries.pending,
    failed: deliveries.failed,
    deliveries: deliveries.deliveries,
  };
  if (flags.json) printResult(flags, result);
  else {
    const line = result.switching
      ? 'waiting for every box before signing with the new key'
      : `signing with ${result.issuer_public_key?.slice(0, 16) ?? 'no key'}…`;
    process.stdout.write(
      `parking ${result.parking_id}: ${result.access_mode}, ${line}\n${deliveryLines(deliveries)}\n`,
    );
  }
  exitWith(deliveries);
}
