// What the service's commands share around a call: SIGINT and SIGTERM end
// the call in flight (its connection closed) with the shell's exit code,
// and a failure of the service becomes the one line and exit 1.
import { CliError, ExitCode } from '../errors.js';
import { ServiceRefused, ServiceUnreachable } from './client.js';

/** Runs `call` with a signal that SIGINT or SIGTERM aborts; then a CliError
 * "interrupted (SIGINT); `what`" with exit code 130 (143 for SIGTERM). */
export async function whileNotInterrupted<T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    stoppedBy = signal;
    interrupt.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await call(interrupt.signal);
  } catch (error) {
    if (stoppedBy !== undefined)
      throw new CliError(`interrupted (${stoppedBy}); ${what}`, stoppedBy === 'SIGTERM' ? 143 : 130);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** A refusal or no answer of the service as its one line, exit 1; anything else as it is. */
export function serviceFailure(error: unknown): unknown {
  if (error instanceof ServiceRefused || error instanceof ServiceUnreachable)
    return new CliError(error.message, ExitCode.failure);
  return error;
}
