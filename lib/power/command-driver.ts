// `driver: command`: any shell commands switch the box's power, as
// labgrid's ExternalPowerDriver does (a relay board with its own tool, a
// PDU's CLI, ssh to another host). `cycle` is the bench's own command when
// given, else off, `off_ms` of waiting, then on.
import { sleep, type Clock } from '../clock.js';
import type { PowerDriver } from './power-driver.js';
import { runCommand } from './run-command.js';

export interface CommandPowerOptions {
  readonly on: string;
  readonly off: string;
  readonly cycle?: string;
  readonly timeoutMs: number;
  readonly settleMs: number;
  /** How long the power stays off in a cycle without its own command, ms. */
  readonly offMs: number;
  readonly clock: Clock;
  /** The commands' environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The switch's name in logs and reports (default: its commands). */
  readonly description?: string;
}

export class CommandPowerDriver implements PowerDriver {
  readonly description: string;
  readonly settleMs: number;

  constructor(private readonly options: CommandPowerOptions) {
    this.description = options.description ?? `command (on: ${options.on}; off: ${options.off})`;
    this.settleMs = options.settleMs;
  }

  async on(): Promise<void> {
    await runCommand(this.options.on, this.options.timeoutMs, this.options.env);
  }

  async off(): Promise<void> {
    await runCommand(this.options.off, this.options.timeoutMs, this.options.env);
  }

  async cycle(): Promise<void> {
    if (this.options.cycle !== undefined) {
      await runCommand(this.options.cycle, this.options.timeoutMs, this.options.env);
      return;
    }
    await offThenOn(this, this.options.clock, this.options.offMs);
  }
}

/** A cycle for a switch without its own: off, `offMs` for the box to lose power, on. */
export async function offThenOn(driver: Pick<PowerDriver, 'on' | 'off'>, clock: Clock, offMs: number): Promise<void> {
  await driver.off();
  await sleep(clock, offMs);
  await driver.on();
}
