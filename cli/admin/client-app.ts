// `parkbench admin client-app create`: a client application for the
// registration and token endpoints (api/client-apps/create.ts). The secret
// is printed once, stored as a SHA-256 hash.
import type { Command } from 'commander';
import { printResult, withCommonFlags, withDatabase, type CommonFlags } from './context.js';
import { parseName } from './validate.js';

export function registerClientAppCommands(admin: Command): void {
  const group = admin.command('client-app').description('client applications (client_app_id / client_secret)');
  withCommonFlags(group.command('create').description('create a client application; prints its secret once'))
    .requiredOption('--name <name>', 'a name for the operator')
    .action(async (flags: CommonFlags & { name: string }) => {
      const name = parseName('--name', flags.name);
      const { createClientApp } = await import('../../api/auth/create-client-app.js');
      const created = await withDatabase(flags, (ctx) => createClientApp(ctx.store, name, ctx.now));
      printResult(flags, created, 'The client secret is shown only now: it is stored hashed.');
    });
}
