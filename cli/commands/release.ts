// `parkbench release --box MODULE_ID --token T`: gives a reserved box back
// (the next in its queue gets it). Exit 0 released, 1 refused (the token is
// no live reservation of yours for this box) or the service could not be
// reached, 2 bad flags.
import type { Command } from 'commander';
import { addServiceOptions } from '../service/flags.js';
import type { ReleaseFlags } from '../service/reservation-flags.js';

export function registerReleaseCommand(program: Command): void {
  const command = program
    .command('release')
    .description('Release a box reserved with `parkbench reserve`: the next in its queue gets it')
    .option('--box <module_id>', "the box's module_id")
    .option('--token <token>', "the reservation's token (default: --reservation or $PARKBENCH_RESERVATION)");
  addServiceOptions(command).action(async (flags: ReleaseFlags) => {
    const { runRelease } = await import('../run/release.js');
    await runRelease(flags);
  });
}
