// Graceful stop for long-running commands (start, api, sim, gateway):
// resolves on the first SIGINT or SIGTERM, or, with exitWithParent, once the
// process that started this one has gone (parent-watch.ts: `kill $!` of a
// backgrounded `npx parkbench …` ends npm, not this process). A signal while
// stopping exits at once.
import { systemClock } from '../lib/clock.js';
import { watchParent } from './parent-watch.js';

/** Why a long-running command stops. */
export type StopReason = NodeJS.Signals | 'parent gone';

export interface ShutdownOptions {
  /** Also stop when the parent process goes (`--no-exit-with-parent` turns it off). */
  readonly exitWithParent: boolean;
}

export function onShutdown(options: ShutdownOptions): Promise<StopReason> {
  return new Promise((resolve) => {
    const parent = options.exitWithParent ? watchParent({ clock: systemClock }) : undefined;
    let stopping = false;
    const stop = (reason: StopReason): void => {
      if (stopping) return;
      stopping = true;
      parent?.stop();
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      resolve(reason);
    };
    const handler = (signal: NodeJS.Signals): void => {
      stop(signal);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    void parent?.gone.then(() => {
      stop('parent gone');
    });
  });
}

/** The option every long-running command takes (commander: `exitWithParent`, true unless negated). */
export const NO_EXIT_WITH_PARENT = [
  '--no-exit-with-parent',
  'keep running when the process that started this one exits (by default it stops as on SIGTERM, within half a second)',
] as const;
