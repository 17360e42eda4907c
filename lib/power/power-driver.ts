// What the bench needs from a power switch, whatever it is: a relay board, a
// USB hub port, a smart plug, a shell command or a person at the bench. The
// conformance suite's power-cycle case, `parkbench power` and soak's
// --power-cycle-every use this alone; drivers.ts makes one from the bench
// file's `power:` entry.

export interface PowerDriver {
  /** One line naming the switch (driver and where), for logs and reports. */
  readonly description: string;
  /** How long the box takes to answer after power on, before the first command, ms. */
  readonly settleMs: number;
  on(): Promise<void>;
  off(): Promise<void>;
  /** Off, then on: the switch's own cycle where it has one. Does not wait `settleMs`. */
  cycle(): Promise<void>;
}

/** The switch did not do what it was told: a command that failed or timed
 * out, a plug that answered an error or nothing. The message is one line. */
export class PowerError extends Error {
  override readonly name = 'PowerError';
}

/** The switch cannot be worked here at all (the `prompt` driver without a
 * terminal): a case that needs it is skipped with this message. */
export class PowerUnavailable extends Error {
  override readonly name = 'PowerUnavailable';
}
