// `driver: uhubctl`: a box powered from a USB hub port that can switch its
// VBUS, through Debian's `uhubctl` (mvp/uhubctl): `uhubctl -l <hub> -p
// <port> -a on|off|cycle`. It prints the port's status before and after;
// it exits non-zero when no hub matches the location ("No compatible
// devices detected"), with the reason on stderr. Its own cycle waits `-d`
// seconds off (`off_ms`, rounded up to whole seconds).
import type { PowerDriver } from './power-driver.js';
import { runCommand } from './run-command.js';

export interface UhubctlPowerOptions {
  /** The hub's location, as `uhubctl` lists it (`1-1`, `2-1.4`). */
  readonly hub: string;
  readonly port: number;
  readonly timeoutMs: number;
  readonly settleMs: number;
  readonly offMs: number;
  readonly env?: NodeJS.ProcessEnv;
}

export class UhubctlPowerDriver implements PowerDriver {
  readonly description: string;
  readonly settleMs: number;

  constructor(private readonly options: UhubctlPowerOptions) {
    this.description = `uhubctl hub ${options.hub} port ${options.port}`;
    this.settleMs = options.settleMs;
  }

  on(): Promise<void> {
    return this.#action('on');
  }

  off(): Promise<void> {
    return this.#action('off');
  }

  cycle(): Promise<void> {
    return this.#action('cycle', ['-d', String(Math.max(1, Math.ceil(this.options.offMs / 1000)))]);
  }

  async #action(action: 'on' | 'off' | 'cycle', extra: readonly string[] = []): Promise<void> {
    // hub and port are checked at load (digits, dots, dashes): nothing for the shell to read.
    const line = ['uhubctl', '-l', this.options.hub, '-p', String(this.options.port), '-a', action, ...extra].join(' ');
    // The cycle's own wait counts against the time limit.
    const timeoutMs = action === 'cycle' ? this.options.timeoutMs + this.options.offMs : this.options.timeoutMs;
    await runCommand(line, timeoutMs, this.options.env);
  }
}
