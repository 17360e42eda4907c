// `parkbench admin demo`: idempotent demo data (api/demo/ensure.ts), printed
// with its credentials, and an MQTT operator account for the tools that talk
// to the boxes (`parkbench app`, mosquitto_pub, `conformance --mqtt`).
import type { Command } from 'commander';
import { printResult, withCommonFlags, withDatabase, type CommonFlags } from './context.js';

/** The demo's MQTT operator account of this command; `parkbench start` keeps another (op-demo-app). */
const DEMO_TOOLS_OPERATOR = { name: 'demo-tools', username: 'op-demo-tools' } as const;

export function registerDemoCommand(admin: Command): void {
  withCommonFlags(
    admin
      .command('demo')
      .description(
        'create demo data once (a parking with two boxes, a client app, a driver); later runs print it again, with a new password for its MQTT operator account',
      ),
  ).action(async (flags: CommonFlags) => {
    const [{ ensureDemo }, { ensureOperatorClient }] = await Promise.all([
      import('../../api/demo/ensure.js'),
      import('../../api/mqtt/clients.js'),
    ]);
    await withDatabase(flags, async (ctx) => {
      const demo = await ensureDemo(ctx.store, ctx.config.scryptLog2N, ctx.now);
      // Stored hashed, so it cannot be printed again: each run gives the account a new one.
      const operator = await ensureOperatorClient(
        ctx.store,
        DEMO_TOOLS_OPERATOR.name,
        DEMO_TOOLS_OPERATOR.username,
        ctx.now,
      );
      printResult(
        flags,
        { ...demo, mqtt_operator: operator },
        [
          'Demo data: these credentials are kept in clear in the database. Box credentials: `parkbench admin box provision --module-id N`.',
          'mqtt_operator logs in to the broker of `parkbench api` and `parkbench start` (for `parkbench app --mqtt-username/--mqtt-password`, mosquitto_pub, `parkbench conformance --mqtt`);',
          'its password is new at each run, the last one printed works (an external broker: export the accounts again, `parkbench admin mqtt-acl`).',
        ].join('\n'),
      );
    });
  });
}
