// `parkbench admin forwarding status [--parking ID] [--json]` and
// `parkbench admin forwarding retry --parking ID`: flags and output; the
// outbox's administration is api/forwarding/administration.ts.
import type { Command } from 'commander';
import { forwardingStatus, reviveDeadDeliveries, type ForwardingStatus } from '../../api/forwarding/administration.js';
import { withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseId } from './validate.js';

function printTable(rows: ForwardingStatus[]): void {
  if (rows.length === 0) {
    process.stdout.write('no box logs were queued for forwarding\n');
    return;
  }
  const lines = rows.map((row) =>
    [`parking ${row.parking_id}`, row.url, `pending ${row.pending}`, `delivered ${row.delivered}`, `dead ${row.dead}`, `last error: ${row.last_error ?? 'none'}`].join('  '),
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

interface StatusFlags extends CommonFlags {
  parking?: string;
}

export function registerForwardingCommands(admin: Command): void {
  const group = admin.command('forwarding').description('box logs forwarded to third parties (spec 6)');
  withCommonFlags(group.command('status').description('per URL: box logs pending, delivered and dead, and the last error'))
    .option('--parking <id>', 'only this secured parking')
    .action((flags: StatusFlags) => {
      const parkingId = flags.parking === undefined ? undefined : parseId('--parking', flags.parking);
      return withReadOnlyDatabase(flags, (ctx) => {
        const rows = forwardingStatus(ctx.db, parkingId);
        if (flags.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        else printTable(rows);
      });
    });

  withCommonFlags(group.command('retry').description("revive a parking's dead deliveries: pending again, due now, with a fresh FORWARDING_MAX_AGE_HOURS"))
    .requiredOption('--parking <id>', 'the secured parking id')
    .action((flags: CommonFlags & { parking: string }) => {
      const parkingId = parseId('--parking', flags.parking);
      return withDatabase(flags, (ctx) => {
        const revived = reviveDeadDeliveries(ctx.db, parkingId, ctx.now);
        if (flags.json) process.stdout.write(`${JSON.stringify({ parking_id: parkingId, revived_deliveries: revived })}\n`);
        else process.stdout.write(`${revived} dead deliver${revived === 1 ? 'y' : 'ies'} of parking ${parkingId} pending again; a running API sends them within a second\n`);
      });
    });
}
