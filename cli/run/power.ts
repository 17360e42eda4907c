// `parkbench power`, its flags read (commands/power.ts): the box's switch
// made from the bench file and worked once. A switch that fails is one
// line, exit 1; a cycle waits the box's settle_ms after power on, so the
// box answers when the command returns.
import { sleep, systemClock } from '../../lib/clock.js';
import { powerDriverFor } from '../../lib/power/drivers.js';
import { PowerError, PowerUnavailable } from '../../lib/power/power-driver.js';
import { loadBench, pickBox } from '../conformance/bench-box.js';
import { CliError, UsageError } from '../errors.js';

export interface PowerFlags {
  bench?: string;
  box?: string;
  json?: boolean;
}

export async function runPower(action: 'on' | 'off' | 'cycle', flags: PowerFlags): Promise<void> {
  if (flags.bench === undefined) throw new UsageError('--bench FILE is required: the bench file naming the switch');
  const bench = await loadBench(flags.bench);
  const box = pickBox(bench, flags.box);
  if (box.power === undefined)
    throw new UsageError(`${box.place}: box ${box.moduleId} has no power: entry (no switch to work)`);
  const driver = powerDriverFor(box.power, { moduleId: box.moduleId });
  const started = systemClock.now();
  try {
    if (action === 'on') await driver.on();
    else if (action === 'off') await driver.off();
    else {
      await driver.cycle();
      await sleep(systemClock, driver.settleMs);
    }
  } catch (error) {
    if (error instanceof PowerError || error instanceof PowerUnavailable)
      throw new CliError(`box ${box.moduleId}: power ${action}: ${error.message}`);
    throw error;
  }
  const ms = systemClock.now() - started;
  const settled = action === 'cycle' ? driver.settleMs : 0;
  process.stdout.write(
    flags.json === true
      ? `${JSON.stringify({ module_id: box.moduleId, action, driver: box.power.driver, switch: driver.description, settle_ms: settled, ms })}\n`
      : `box ${box.moduleId}: power ${action === 'cycle' ? 'cycled' : action} (${driver.description})${
          action === 'cycle' ? `, then waited settle_ms ${settled} ms` : ''
        }, ${ms} ms\n`,
  );
}
