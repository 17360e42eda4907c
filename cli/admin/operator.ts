// `parkbench admin operator add|remove|list`: accounts of the operator HTTP
// API (api/operators/accounts.ts). The token is printed once, stored hashed.
import type { Command } from 'commander';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseName } from './validate.js';

interface NameFlags extends CommonFlags {
  name: string;
}

export function registerOperatorCommands(admin: Command): void {
  const group = admin
    .command('operator')
    .description('operators of the operator HTTP API (/api/operator/..., Authorization: Bearer <token>)');
  withCommonFlags(group.command('add').description('add an operator; prints its bearer token once'))
    .requiredOption('--name <name>', "the operator's unique name")
    .action(async (flags: NameFlags) => {
      const name = parseName('--name', flags.name);
      const { addOperator } = await import('../../api/operators/accounts.js');
      const added = await withDatabase(flags, (ctx) => addOperator(ctx.store, name, ctx.now));
      printResult(
        flags,
        added,
        'The token is shown only now: it is stored hashed. Send it as Authorization: Bearer <token> to /api/operator/...',
      );
    });
  withCommonFlags(group.command('remove').description('remove an operator: its token is refused at once'))
    .requiredOption('--name <name>', "the operator's name")
    .action(async (flags: NameFlags) => {
      const name = parseName('--name', flags.name);
      const { removeOperator } = await import('../../api/operators/accounts.js');
      const removed = await withDatabase(flags, (ctx) => removeOperator(ctx.store, name));
      if (flags.json) printResult(flags, removed);
      else process.stdout.write(`operator "${name}" removed: its token is refused from now on\n`);
    });
  withCommonFlags(group.command('list').description('list the operators (never their tokens)')).action(
    async (flags: CommonFlags) => {
      const { listOperators } = await import('../../api/operators/accounts.js');
      const operators = await withReadOnlyDatabase(flags, (ctx) => listOperators(ctx.store));
      if (flags.json) printResult(flags, operators);
      else
        process.stdout.write(
          operators.length === 0
            ? 'no operator\n'
            : `${operators.map((o) => `${o.name}\tadded ${o.created_at}`).join('\n')}\n`,
        );
    },
  );
}
