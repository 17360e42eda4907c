// `parkbench admin forwarding status [--parking ID] [--json]` and
// `parkbench admin forwarding retry --parking ID`: the forwarding outbox
// (spec 6) as the operator sees it: per URL, box logs pending, delivered and
// dead, and the last error; and dead deliveries revived.
import type { Command } from 'commander';
import { OutboxRepository, type UrlStatus } from '../../api/forwarding/outbox.js';
import { ParkingRepository } from '../../api/repositories/parkings.js';
import { CliError } from '../errors.js';
import { withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseId } from './validate.js';

export interface ForwardingStatus {
  parking_id: number;
  url: string;
  pending: number;
  delivered: number;
  dead: number;
  last_error: string | null;
  last_attempt_at: string | null;
}

function statusOf(row: UrlStatus): ForwardingStatus {
  return {
    parking_id: row.parking_id,
    url: row.url,
    pending: row.pending,
    delivered: row.delivered,
    dead: row.dead,
    last_error: row.last_error,
    last_attempt_at: row.last_attempt_at === null ? null : new Date(row.last_attempt_at).toISOString(),
  };
}

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
        if (parkingId !== undefined && !new ParkingRepository(ctx.db).findById(parkingId)) throw new CliError(`no secured parking with id ${parkingId}`);
        const rows = new OutboxRepository(ctx.db).status(parkingId).map(statusOf);
        if (flags.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        else printTable(rows);
      });
    });

  withCommonFlags(group.command('retry').description("revive a parking's dead deliveries: pending again, due now, with a fresh FORWARDING_MAX_AGE_HOURS"))
    .requiredOption('--parking <id>', 'the secured parking id')
    .action((flags: CommonFlags & { parking: string }) => {
      const parkingId = parseId('--parking', flags.parking);
      return withDatabase(flags, (ctx) => {
        if (!new ParkingRepository(ctx.db).findById(parkingId)) throw new CliError(`no secured parking with id ${parkingId}`);
        const revived = new OutboxRepository(ctx.db).revive(parkingId, ctx.now);
        if (flags.json) process.stdout.write(`${JSON.stringify({ parking_id: parkingId, revived_deliveries: revived })}\n`);
        else process.stdout.write(`${revived} dead deliver${revived === 1 ? 'y' : 'ies'} of parking ${parkingId} pending again; a running API sends them within a second\n`);
      });
    });
}
