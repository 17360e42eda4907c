// A conformance target that can restart the box behind it, for running the
// suite's power-cycle case in process: the link's own target, plus a
// restart() the test gives (a simulation stopped and started again, its
// power switched, a box process killed and started again), counted.
import type { BarrierObservation, BoxTarget, Exchange } from '../../conformance/box-target.js';

export interface RestartableTarget extends BoxTarget {
  restart(): Promise<void>;
  /** Restarts so far. */
  readonly restarts: number;
}

/** `link` with `restart`; close() closes the link, then runs `stop` (the box behind it). */
export function restartableTarget(
  link: BoxTarget,
  restart: () => Promise<void>,
  stop: () => Promise<void> = () => Promise.resolve(),
): RestartableTarget {
  let restarts = 0;
  return {
    get kind() {
      return link.kind;
    },
    get badReports() {
      return link.badReports;
    },
    get restarts() {
      return restarts;
    },
    open: () => link.open(),
    exchange: (command: Buffer, timeoutMs: number): Promise<Exchange> => link.exchange(command, timeoutMs),
    sendGarbage: () => link.sendGarbage(),
    onBarrier: (listener: (observation: BarrierObservation) => void) => link.onBarrier(listener),
    async restart() {
      await restart();
      restarts++;
    },
    async close() {
      await link.close();
      await stop();
    },
  };
}
