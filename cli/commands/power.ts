// `parkbench power on|off|cycle --bench FILE --box MODULE_ID`: works the
// power switch the bench file gives a box (its flags here; run/power.ts
// runs it). Exit 0 when the switch did it, 1 when it did not (one line), 2
// for bad flags or a bad bench file.
import { Argument, type Command } from 'commander';
import type { PowerFlags } from '../run/power.js';

export function registerPowerCommand(program: Command): void {
  program
    .command('power')
    .description("Switch a box's power on, off, or off and on again, with the switch its bench file names")
    .addArgument(new Argument('<action>', 'on, off or cycle').choices(['on', 'off', 'cycle']))
    .option('--bench <file>', 'the bench file (bench.yaml): its boxes, their links and power switches')
    .option('--box <module_id>', "the box's module_id on the bench (a bench of one box may leave it out)")
    .option('--json', 'print what was done as JSON')
    .addHelpText(
      'after',
      "\ncycle: off, then on (the switch's own cycle where it has one), then waits the box's settle_ms before it exits.",
    )
    .action(async (action: 'on' | 'off' | 'cycle', flags: PowerFlags) => {
      const { runPower } = await import('../run/power.js');
      await runPower(action, flags);
    });
}
