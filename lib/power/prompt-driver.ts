// `driver: prompt`: no switch. The person at the bench is asked on stderr
// to switch the box off (or on), and presses Enter when done. It needs a
// terminal on stdin: without one (CI, a pipe) nobody can answer, and every
// call is PowerUnavailable, which skips the conformance power-cycle case
// with this reason.
import { createInterface } from 'node:readline';
import { PowerUnavailable, type PowerDriver } from './power-driver.js';

export interface PromptPowerOptions {
  readonly settleMs: number;
  /** What the person is asked about, e.g. "box 4242". */
  readonly box: string;
  readonly input?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output?: NodeJS.WritableStream;
}

export const NO_TERMINAL = 'the prompt power driver needs a terminal on stdin: nobody can switch the box here';

export class PromptPowerDriver implements PowerDriver {
  readonly description = 'prompt (the person at the bench)';
  readonly settleMs: number;

  constructor(private readonly options: PromptPowerOptions) {
    this.settleMs = options.settleMs;
  }

  /** Whether someone can answer: stdin is a terminal. */
  get available(): boolean {
    return (this.options.input ?? process.stdin).isTTY === true;
  }

  readonly unavailableReason = NO_TERMINAL;

  on(): Promise<void> {
    return this.#ask(`switch ${this.options.box} ON`);
  }

  off(): Promise<void> {
    return this.#ask(`switch ${this.options.box} OFF`);
  }

  cycle(): Promise<void> {
    return this.#ask(`switch ${this.options.box} OFF, then ON again`);
  }

  #ask(what: string): Promise<void> {
    if (!this.available) return Promise.reject(new PowerUnavailable(NO_TERMINAL));
    const input = this.options.input ?? process.stdin;
    const output = this.options.output ?? process.stderr;
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input, terminal: false });
      output.write(`parkbench: ${what}, then press Enter\n`);
      const closed = (): void => {
        reject(new PowerUnavailable('stdin closed before Enter: nobody switched the box'));
      };
      lines.once('line', () => {
        lines.off('close', closed);
        lines.close();
        resolve();
      });
      lines.once('close', closed);
    });
  }
}
