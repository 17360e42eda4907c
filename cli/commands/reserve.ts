// `parkbench reserve --box MODULE_ID --ttl 30m [--wait 10m]`: takes a box
// for the caller on a running service (or renews the caller's
// reservation), so that no one else's run, command or fault reaches it
// while it is held; prints the reservation's token. Exit 0 taken, 3 the
// wait ended with the box still held (one line naming the holder), 1 the
// service refused or could not be reached, 2 bad flags. Ctrl-C during the
// wait leaves the queue.
import type { Command } from 'commander';
import { addServiceOptions } from '../service/flags.js';
import type { ReserveFlags } from '../service/reservation-flags.js';

export function registerReserveCommand(program: Command): void {
  const command = program
    .command('reserve')
    .description(
      "Reserve a box on a running service (CI and people share a bench): the reservation's token on stdout; with --wait, queue until the box is free",
    )
    .option('--box <module_id>', "the box's module_id")
    .option(
      '--ttl <time>',
      'how long the reservation lasts unless renewed or released: 90s, 30m, 2h, 1h30m (at most 24h)',
    )
    .option(
      '--wait <time>',
      'when another holds the box, wait in the queue this long for it (at most 1h); without it, a held box is exit 3 at once',
    )
    .option('--note <text>', 'why, shown to whoever finds the box held (e.g. "CI job 123")')
    .option('--json', "print the service's answer (the token, the holder, expires_at, the queue) as JSON")
    .option(
      '--token <token>',
      'renew this reservation of yours instead (a new expiry, --ttl from now; default: --reservation or $PARKBENCH_RESERVATION)',
    );
  addServiceOptions(command).action(async (flags: ReserveFlags) => {
    const { runReserve } = await import('../run/reserve.js');
    await runReserve(flags);
  });
}
