// `driver: usbrelay`: a USB HID relay board through Debian's `usbrelay`
// (darrylb123/usbrelay). Its CLI: `usbrelay` alone lists every relay as
// `SERIAL_N=0|1`; `usbrelay SERIAL_N=1` closes relay N of the board whose
// serial is SERIAL (`=0` opens it); it exits non-zero, with the reason on
// stderr, when the board or relay is not found or the write fails. The box
// is powered while the relay is closed (wire it to the normally-open
// contact).
import type { Clock } from '../clock.js';
import { CommandPowerDriver } from './command-driver.js';

export interface UsbrelayPowerOptions {
  /** `SERIAL_N`: the board's serial and the relay's number, as `usbrelay` lists it. */
  readonly relay: string;
  readonly timeoutMs: number;
  readonly settleMs: number;
  readonly offMs: number;
  readonly clock: Clock;
  readonly env?: NodeJS.ProcessEnv;
}

/** A command switch whose commands are `usbrelay SERIAL_N=1` and `=0`. */
export class UsbrelayPowerDriver extends CommandPowerDriver {
  constructor(options: UsbrelayPowerOptions) {
    // The relay name is checked at load (letters, digits, underscore): nothing for the shell to read.
    const { relay, ...rest } = options;
    super({ ...rest, on: `usbrelay ${relay}=1`, off: `usbrelay ${relay}=0`, description: `usbrelay ${relay}` });
  }
}
