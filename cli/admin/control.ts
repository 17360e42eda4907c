// `parkbench admin control list|retry|skip`: the queue of REVOKE and
// SET_ISSUER deliveries the API sends the boxes, and what an operator does
// about one that is stuck (api/control/interventions.ts, as the operator
// API's /api/operator/control_commands).
import type { Command } from 'commander';
import type { ControlCommandView, Intervention } from '../../api/control/interventions.js';
import type { ControlState } from '../../api/control/repository.js';
import { UsageError } from '../errors.js';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseId, parseModuleId } from './validate.js';

interface ListFlags extends CommonFlags {
  moduleId?: string;
  state?: string;
  limit?: string;
}

interface InterveneFlags extends CommonFlags {
  id: string;
}

const STATES: readonly ControlState[] = ['pending', 'done', 'failed', 'skipped'];
const DEFAULT_LIMIT = 50;

function parseState(raw: string): ControlState {
  const state = STATES.find((candidate) => candidate === raw);
  if (state === undefined) throw new UsageError(`--state must be one of ${STATES.join(', ')}, got "${raw}"`);
  return state;
}

function parseLimit(raw: string): number {
  const limit = parseId('--limit', raw);
  if (limit > 500) throw new UsageError(`--limit must be at most 500, got ${limit}`);
  return limit;
}

/** `#12 box 9101 REVOKE (revoke) failed after 3 sends: REVOCATION_FULL: ...` */
function line(command: ControlCommandView): string {
  const detail = command.last_error ?? command.last_status;
  const waiting = command.waiting === null ? '' : `; waiting: ${command.waiting.reason}`;
  return `#${command.id} box ${command.module_id} ${command.kind} (${command.purpose}, ${command.operation}) ${command.state}, ${command.attempts} sends${detail === null ? '' : `: ${detail}`}${waiting}`;
}

export function registerControlCommands(admin: Command): void {
  const group = admin
    .command('control')
    .description('the REVOKE and SET_ISSUER deliveries the API sends the boxes: list, retry, skip');

  withCommonFlags(group.command('list').description('control commands, newest first'))
    .option('--module-id <n>', 'one box')
    .option('--state <state>', `only in this state: ${STATES.join(', ')}`)
    .option('--limit <n>', `at most this many, 1..500 (default ${DEFAULT_LIMIT})`)
    .action(async (flags: ListFlags) => {
      const filter = {
        limit: flags.limit === undefined ? DEFAULT_LIMIT : parseLimit(flags.limit),
        ...(flags.moduleId === undefined ? {} : { moduleId: parseModuleId(flags.moduleId) }),
        ...(flags.state === undefined ? {} : { state: parseState(flags.state) }),
      };
      const { listControlCommands } = await import('../../api/control/interventions.js');
      await withReadOnlyDatabase(flags, async (ctx) => {
        const commands = await listControlCommands(ctx.store, filter, ctx.now);
        if (flags.json) process.stdout.write(`${JSON.stringify(commands, null, 2)}\n`);
        else
          process.stdout.write(commands.length === 0 ? 'no control commands\n' : `${commands.map(line).join('\n')}\n`);
      });
    });

  const intervention = (name: Intervention, description: string): void => {
    withCommonFlags(group.command(name).description(description))
      .requiredOption('--id <n>', 'the control command id (admin control list)')
      .action(async (flags: InterveneFlags) => {
        const id = parseId('--id', flags.id);
        const { intervene } = await import('../../api/control/interventions.js');
        await withDatabase(flags, async (ctx) => {
          const command = await intervene(ctx.store, id, name, ctx.now, `admin control ${name} --id ${id}`);
          if (flags.json) printResult(flags, command);
          else process.stdout.write(`${line(command)}\n`);
        });
      });
  };
  intervention(
    'retry',
    'send a control command again: a failed one goes back to the queue, a pending one goes out at the next poll',
  );
  intervention(
    'skip',
    'give up on a control command: its operation goes on without it (a rotation takes its step if it was the last)',
  );
}
