// `parkbench admin forwarding status [--parking ID] [--json]`,
// `parkbench admin forwarding retry --parking ID` and
// `parkbench admin forwarding replay --parking ID --since ISO_TIME`: flags
// and output; the outbox's administration is api/forwarding/administration.ts.
import type { Command } from 'commander';
import type { ForwardingStatus } from '../../api/forwarding/administration.js';
import { withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseId, parseIsoTimeFlag } from './validate.js';

function printTable(rows: ForwardingStatus[]): void {
  if (rows.length === 0) {
    process.stdout.write('no box logs were queued for forwarding\n');
    return;
  }
  const lines = rows.map((row) =>
    [
      `parking ${row.parking_id}`,
      row.url,
      ...(row.disabled_at === null
        ? []
        : [`DISABLED since ${row.disabled_at} (410 Gone; admin forwarding retry revives it)`]),
      `pending ${row.pending}`,
      `delivered ${row.delivered}`,
      `dead ${row.dead}`,
      `last error: ${row.last_error ?? 'none'}`,
    ].join('  '),
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

interface StatusFlags extends CommonFlags {
  parking?: string;
}

export function registerForwardingCommands(admin: Command): void {
  const group = admin
    .command('forwarding')
    .description('box logs forwarded to third parties (spec 6, Standard Webhooks)');
  withCommonFlags(
    group
      .command('status')
      .description('per URL: box logs pending, delivered and dead, the last error, and whether a 410 Gone disabled it'),
  )
    .option('--parking <id>', 'only this secured parking')
    .action(async (flags: StatusFlags) => {
      const parkingId = flags.parking === undefined ? undefined : parseId('--parking', flags.parking);
      const { forwardingStatus } = await import('../../api/forwarding/administration.js');
      await withReadOnlyDatabase(flags, async (ctx) => {
        const rows = await forwardingStatus(ctx.store, parkingId);
        if (flags.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        else printTable(rows);
      });
    });

  withCommonFlags(
    group
      .command('retry')
      .description(
        "revive a parking's dead deliveries (pending again, due now, a fresh retry schedule) and its URLs a 410 Gone disabled",
      ),
  )
    .requiredOption('--parking <id>', 'the secured parking id')
    .action(async (flags: CommonFlags & { parking: string }) => {
      const parkingId = parseId('--parking', flags.parking);
      const { reviveDeadDeliveries } = await import('../../api/forwarding/administration.js');
      await withDatabase(flags, async (ctx) => {
        const revival = await reviveDeadDeliveries(ctx.store, parkingId, ctx.now);
        const revived = revival.revived_deliveries;
        if (flags.json) process.stdout.write(`${JSON.stringify(revival)}\n`);
        else {
          const enabled = revival.enabled_urls.map((url) => `; ${url} enabled again`).join('');
          process.stdout.write(
            `${revived} dead deliver${revived === 1 ? 'y' : 'ies'} of parking ${parkingId} pending again${enabled}; a running API sends them within a second\n`,
          );
        }
      });
    });

  withCommonFlags(
    group
      .command('replay')
      .description(
        "queue again, as new deliveries, a parking's box logs stored since a time (a receiver that lost data gets it back)",
      ),
  )
    .requiredOption('--parking <id>', 'the secured parking id')
    .requiredOption(
      '--since <iso-time>',
      'box logs the service received at or after this time, e.g. 2026-01-31T08:00:00Z',
    )
    .action(async (flags: CommonFlags & { parking: string; since: string }) => {
      const parkingId = parseId('--parking', flags.parking);
      const since = parseIsoTimeFlag('--since', flags.since);
      const { replayBoxLogs } = await import('../../api/forwarding/administration.js');
      await withDatabase(flags, async (ctx) => {
        const replay = await replayBoxLogs(ctx.store, parkingId, since, ctx.now);
        if (flags.json) process.stdout.write(`${JSON.stringify(replay)}\n`);
        else
          process.stdout.write(
            `${replay.queued} box log${replay.queued === 1 ? '' : 's'} of parking ${parkingId} since ${replay.since} queued again for ${replay.url}, as new deliveries\n`,
          );
      });
    });
}
