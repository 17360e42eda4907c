// `parkbench admin smart-key revoke`: the key is refused by the service at
// once; a REVOKE goes to every box of its module list (api/control/).
import type { Command } from 'commander';
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

interface RevokeFlags extends CommonFlags, WaitFlags {
  id: string;
}

export function registerSmartKeyCommands(admin: Command): void {
  const group = admin.command('smart-key').description("drivers' smart keys");
  withWaitFlag(
    withCommonFlags(
      group
        .command('revoke')
        .description('revoke a smart key: refused by the service at once, and a REVOKE to every box it opens'),
    ),
  )
    .requiredOption('--id <n>', 'the smart key id')
    .action(async (flags: RevokeFlags) => {
      const keyId = parseId('--id', flags.id);
      const seconds = waitSeconds(flags);
      const { revokeSmartKey } = await import('../../api/control/operations.js');
      await withDatabase(flags, async (ctx) => {
        const deps = controlDeps(ctx.store);
        const revoked = await revokeSmartKey(deps, keyId, ctx.now, `admin smart-key revoke --id ${keyId}`);
        const report = await waitForAnswers(deps.store, revoked.operation, seconds);
        const result = {
          smart_key_id: keyId,
          revoked_at: new Date(revoked.revoked_at).toISOString(),
          newly_revoked: revoked.newly_revoked,
          done: report.done,
          pending: report.pending,
          failed: report.failed,
          skipped: report.skipped,
          deliveries: report.deliveries,
        };
        if (flags.json) printResult(flags, result);
        else {
          const head = revoked.newly_revoked
            ? `smart key ${keyId} revoked`
            : `smart key ${keyId} was already revoked at ${result.revoked_at}`;
          process.stdout.write(`${head}\n${deliveryLines(report)}\n`);
        }
        exitWith(report);
      });
    });
}
