// A run stopped from outside (SIGINT on the command line, the API stopping
// or an operator cancelling): no case starts, and what a case is waiting
// for (an answer, a barrier state) is given up at once rather than after
// --answer-ms or --cycle-ms, so a silent box cannot hold the stop back.

/** The run was interrupted: no new command is sent, the wait under way ends. */
export class SuiteInterrupted extends Error {
  override readonly name = 'SuiteInterrupted';
  constructor() {
    super('interrupted');
  }
}

/** `work`, unless `signal` aborts first (or has): then SuiteInterrupted at
 * once. What `work` was doing goes on in its owner (a target's wait ends at
 * its own timeout, or when the target closes); its result is dropped. */
export function untilInterrupted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(new SuiteInterrupted());
  }
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(new SuiteInterrupted());
    signal.addEventListener('abort', stop, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
