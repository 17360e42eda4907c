/** Exit codes of the `parkbench` command. */
export const ExitCode = {
  /** A failure of what was asked (an unknown id, a refused operation). */
  failure: 1,
  /** Bad flags, arguments or configuration: the user must change the call. */
  usage: 2,
  /** The box is reserved by someone else (a `reserve --wait` that ended, a
   * `--record` run refused at its start). */
  boxReserved: 3,
} as const;

/** An error meant for the person at the terminal: printed as one line, then
 * the process exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A flag or argument the user must correct (exit code 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.usage);
    this.name = 'UsageError';
  }
}
