// What the control commands of `parkbench admin` (smart-key revoke, parking
// set-access, parking rotate-issuer) share: --wait, the per-box report and
// the exit code that says whether every box has answered.
import type { Command } from 'commander';
import type { ControlDeps, OperationReport } from '../../api/control/operations.js';
import type { Store } from '../../api/db/store.js';
import { systemClock } from '../../lib/clock.js';
import { UsageError } from '../errors.js';

/** Exit codes of a control command once it has waited (README, Operator CLI). */
export const ControlExit = {
  /** Every box answered OK. */
  done: 0,
  /** Some boxes have not answered yet (none refused): the API keeps sending. */
  pending: 3,
  /** Some box refused (failed deliveries are not retried). */
  failed: 4,
} as const;

/** --wait's default, seconds: long enough for boxes online on the bench to
 * answer (the dispatcher reads its queue every CONTROL_POLL_MS, 1 s), short
 * enough for a terminal. */
export const DEFAULT_WAIT_SECONDS = 5;

export interface WaitFlags {
  wait?: string;
}

export function withWaitFlag(command: Command): Command {
  return command.option(
    '--wait <seconds>',
    `how long to wait for the boxes' answers, 0..3600 (default ${DEFAULT_WAIT_SECONDS})`,
  );
}

export function waitSeconds(flags: WaitFlags): number {
  if (flags.wait === undefined) return DEFAULT_WAIT_SECONDS;
  if (!/^\d{1,4}$/.test(flags.wait) || Number(flags.wait) > 3600)
    throw new UsageError(`--wait must be an integer from 0 to 3600, got "${flags.wait}"`);
  return Number(flags.wait);
}

/** What a control operation of the CLI runs on: the store over the admin's database. */
export function controlDeps(store: Store): ControlDeps {
  return { store };
}

/** Waits for the operation's deliveries (settled by the API process). */
export async function waitForAnswers(store: Store, operation: string, seconds: number): Promise<OperationReport> {
  const { awaitOperation } = await import('../../api/control/operations.js');
  return awaitOperation(store, operation, seconds * 1000, systemClock);
}

/** Sets the exit code from the deliveries: 0 all done, 4 some failed, 3 some pending. */
export function exitWith(report: OperationReport): void {
  process.exitCode =
    report.failed > 0 ? ControlExit.failed : report.pending > 0 ? ControlExit.pending : ControlExit.done;
}

/** One line per box: `box 9101: done (OK)`. */
export function deliveryLines(report: OperationReport): string {
  if (report.deliveries.length === 0) return 'no box needs a control command';
  return report.deliveries
    .map((delivery) => {
      const detail =
        delivery.state === 'done'
          ? `(${delivery.last_status ?? 'OK'})`
          : delivery.last_error === null
            ? `(${delivery.attempts} sends so far)`
            : `(${delivery.last_error}; ${delivery.attempts} sends)`;
      return `box ${delivery.module_id}: ${delivery.kind} ${delivery.state} ${detail}`;
    })
    .join('\n');
}
