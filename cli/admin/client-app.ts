// `parkbench admin client-app create`: a client application for the
// registration and token endpoints. The secret (256 random bits) is printed
// once, stored as a SHA-256 hash.
import type { Command } from 'commander';
import { hashIssuedSecret, randomSecret } from '../../api/auth/secrets.js';
import { ClientAppRepository } from '../../api/repositories/client-apps.js';
import { printResult, withCommonFlags, withDatabase, type AdminContext, type CommonFlags } from './context.js';
import { parseName } from './validate.js';

export interface CreatedClientApp {
  id: number;
  name: string;
  client_app_id: string;
  client_secret: string;
}

/** A promise for its callers' sake (it was async while secrets used scrypt). */
export function createClientApp(ctx: AdminContext, name: string): Promise<CreatedClientApp> {
  const clientAppId = randomSecret(16);
  const clientSecret = randomSecret(32);
  const hash = hashIssuedSecret(clientSecret);
  const id = new ClientAppRepository(ctx.db).insert(name, clientAppId, hash, ctx.now);
  return Promise.resolve({ id, name, client_app_id: clientAppId, client_secret: clientSecret });
}

export function registerClientAppCommands(admin: Command): void {
  const group = admin.command('client-app').description('client applications (client_app_id / client_secret)');
  withCommonFlags(group.command('create').description('create a client application; prints its secret once'))
    .requiredOption('--name <name>', 'a name for the operator')
    .action(async (flags: CommonFlags & { name: string }) => {
      const name = parseName('--name', flags.name);
      const created = await withDatabase(flags, (ctx) => createClientApp(ctx, name));
      printResult(flags, created, 'The client secret is shown only now: it is stored hashed.');
    });
}
