// `driver: usbrelay`: a USB HID relay board through Debian's `usbrelay`
// (darrylb123/usbrelay). Its CLI: `usbrelay` alone lists every relay as
// `SERIAL_N=0|1`; `usbrelay SERIAL_N=1` closes relay N of the board whose
// serial is SERIAL (`=0` opens it); it exits non-zero, with the reason on
// stderr, when the board or relay is not found or the write fails. The box
// is powered while the relay is closed (wire it to the normally-open
// contact).
import type { Clock } from '../clock.js';
import { offThenOn } from './command-driver.js';
import type { PowerDriver } from './power-driver.js';
import { runCommand } from './run-command.js';

export interface UsbrelayPowerOptions {
  /** `SERIAL_N`: the board's serial and the relay's number, as `usbrelay` lists it. */
  readonly relay: string;
  readonly timeoutMs: number;
  readonly settleMs: number;
  readonly offMs: number;
  readonly clock: Clock;
  readonly env?: NodeJS.ProcessEnv;
}

export class UsbrelayPowerDriver implements PowerDriver {
  readonly description: string;
  readonly settleMs: number;

  constructor(private readonly options: UsbrelayPowerOptions) {
    this.description = `usbrelay ${options.relay}`;
    this.settleMs = options.settleMs;
  }

  async on(): Promise<void> {
    await this.#set(1);
  }

  async off(): Promise<void> {
    await this.#set(0);
  }

  cycle(): Promise<void> {
    return offThenOn(this, this.options.clock, this.options.offMs);
  }

  async #set(state: 0 | 1): Promise<void> {
    // The relay name is checked at load (letters, digits, underscore): nothing for the shell to read.
    await runCommand(`usbrelay ${this.options.relay}=${state}`, this.options.timeoutMs, this.options.env);
  }
}
