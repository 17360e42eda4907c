// Tells when the process that started this one has gone. A command started
// by `npx parkbench …` runs under npm and a shell: `kill` of npm's pid (a
// script's `kill $!`) ends them, not this process, which the system then
// hands to init or a subreaper, so its parent pid changes. Node has no
// event for that: the parent pid is read every PARENT_POLL_MS (one
// getppid(2) call). Stdin is no signal here: a backgrounded command of a
// script has /dev/null as stdin, at its end from the start.
import type { Clock, TimerHandle } from '../lib/clock.js';

/** How often the parent pid is read, ms: a stopped parent is noticed within this. */
export const PARENT_POLL_MS = 500;

export interface ParentWatchOptions {
  readonly clock: Clock;
  /** The current parent pid (process.ppid, read afresh each time). */
  readonly parentPid?: () => number;
  readonly intervalMs?: number;
}

export interface ParentWatch {
  /** Resolves once the parent pid is no longer the one at the start. */
  readonly gone: Promise<void>;
  /** Stops reading (the pending read is cancelled, so the process may exit). */
  stop(): void;
}

export function watchParent(options: ParentWatchOptions): ParentWatch {
  const parentPid = options.parentPid ?? (() => process.ppid);
  const intervalMs = options.intervalMs ?? PARENT_POLL_MS;
  const first = parentPid();
  let timer: TimerHandle | undefined;
  let stopped = false;
  const gone = new Promise<void>((resolve) => {
    const read = (): void => {
      timer = undefined;
      if (stopped) return;
      if (parentPid() !== first) {
        stopped = true;
        resolve();
        return;
      }
      timer = options.clock.setTimeout(read, intervalMs);
    };
    timer = options.clock.setTimeout(read, intervalMs);
  });
  return {
    gone,
    stop: () => {
      stopped = true;
      if (timer !== undefined) options.clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
