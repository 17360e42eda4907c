// `parkbench admin demo`: idempotent demo data (api/demo/ensure.ts), printed
// with its credentials.
import type { Command } from 'commander';
import { ensureDemo } from '../../api/demo/ensure.js';
import { printResult, withCommonFlags, withDatabase, type CommonFlags } from './context.js';

export function registerDemoCommand(admin: Command): void {
  withCommonFlags(
    admin
      .command('demo')
      .description(
        'create demo data once (a parking with two boxes, a client app, a driver); later runs print it again',
      ),
  ).action((flags: CommonFlags) =>
    withDatabase(flags, async (ctx) => {
      printResult(
        flags,
        await ensureDemo(ctx.store, ctx.config.scryptLog2N, ctx.now),
        'Demo data: these credentials are kept in clear in the database. Box credentials: `parkbench admin box provision --module-id N`.',
      );
    }),
  );
}
