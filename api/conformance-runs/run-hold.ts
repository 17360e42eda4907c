// A run's hold on its box (control/holds.ts), from its start to its end.
//
// Start, in ONE transaction: the box under test read, its block of control
// sequences reserved (suite-box.ts), the box held for the run, and, for a
// run that may touch the issuer keys (protocol 2), their put-back queued as a
// control command of purpose `restore` with the keys the service says the
// box holds (or, when a SET_ISSUER is still on its way to the box, the keys
// it sets): durable before the suite sends its first SET_ISSUER, so a
// process that dies mid-run leaves it pending, and the dispatcher of any
// process sends it once the hold's lease has passed.
//
// While the run lasts, its lease is renewed (HoldLease); a renewal that
// finds the lease passed means another process may have sent the box a
// command: the run is stopped.
//
// End, in ONE transaction: the box's sequence moved past what the run used,
// the queued put-back marked done when the run's own put-back passed (or the
// run never touched the keys), and the hold released. A put-back the run
// could not confirm stays pending: the dispatcher sends it, with a sequence
// above the run's, now that the box is free.
import type { BoxUnderTest } from '../../conformance/box-under-test.js';
import type { ProtocolVersion } from '../../conformance/cases/index.js';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import { BoxHolds, type ControlBody, ControlCommandRepository, ControlSequences } from '../control/index.js';
import type { Executor, Store } from '../db/store.js';
import { conflict, refused } from '../http/domain-error.js';
import { boxUnderTestOf, reserveControlSequences } from './suite-box.js';

export interface HoldRequest {
  readonly moduleId: number;
  /** The run's id: the hold's holder, and the put-back's operation. */
  readonly runId: string;
  readonly protocol: ProtocolVersion;
  /** Who started the run (the put-back's requested_by names them). */
  readonly requestedBy: string;
  readonly nowMs: number;
  /** The hold's lease, ms (CONFORMANCE_HOLD_MS). */
  readonly leaseMs: number;
}

export interface HeldBox {
  readonly box: BoxUnderTest;
  readonly firstControlSeq: number;
  /** The queued put-back (control_commands.id); null for a protocol 1 run, which never touches the issuer keys. */
  readonly restoreId: number | null;
}

/** The operation of a run's put-back, one per run and box. */
export const restoreOperation = (moduleId: number, runId: string): string => `restore:${moduleId}:${runId}`;

/** Holds the box for the run (see above); refuses (DomainError) an unknown
 * box, protocol 1 on a box without K_park, a box with too few control
 * sequences left, and a box another run holds (any process): nothing is
 * written then. */
export async function holdBox(store: Store, request: HoldRequest): Promise<HeldBox> {
  const { moduleId, runId, nowMs } = request;
  const holds = new BoxHolds(store);
  const commands = new ControlCommandRepository(store);
  return store.kysely.transaction().execute(async (trx) => {
    const box = await boxUnderTestOf(store, moduleId, trx);
    if (request.protocol === 1 && box.parkingKey === null)
      throw refused(`protocol 1 needs a box holding K_park: box ${moduleId} is of a signed parking`);
    // The box's row first: a second run on the box (any process) waits here for this transaction.
    const firstControlSeq = await reserveControlSequences(store, moduleId, trx);
    const other = await holds.acquire(moduleId, runId, nowMs, nowMs + request.leaseMs, trx);
    if (other !== undefined)
      throw conflict(
        `box ${moduleId} is under conformance run ${other.holder} (held until ${new Date(other.held_until).toISOString()}, perhaps by another API process): one at a time`,
      );
    if (request.protocol === 1) return { box, firstControlSeq, restoreId: null };
    const operation = restoreOperation(moduleId, runId);
    await commands.insert(
      {
        moduleId,
        kind: 'SET_ISSUER',
        body: (await pendingIssuerBody(trx, moduleId)) ?? restoreBody(box),
        operation,
        purpose: 'restore',
        parkingId: box.parkingId,
        requestedBy: `conformance run ${runId}, started by ${request.requestedBy}`,
      },
      nowMs,
      trx,
    );
    const queued = await trx
      .selectFrom('control_commands')
      .select('id')
      .where('operation', '=', operation)
      .where('module_id', '=', moduleId)
      .executeTakeFirstOrThrow();
    return { box, firstControlSeq, restoreId: queued.id };
  });
}

/** The keys the service says the box holds, by boxUnderTestOf's rule; a box
 * that held none gets one nobody can sign for, as the suite's own put-back
 * does (SET_ISSUER cannot set none). */
function restoreBody(box: BoxUnderTest): ControlBody {
  const { issuerKey, issuerKeyPrevious } = box.issuerKeys;
  if (issuerKey === null)
    return { issuer_key: generateIssuerKeyPair().publicKey.toString('hex'), issuer_key_previous: null };
  return { issuer_key: issuerKey.toString('hex'), issuer_key_previous: issuerKeyPrevious?.toString('hex') ?? null };
}

/** The body of the newest SET_ISSUER still pending for the box: it goes out
 * before the put-back (a box's commands go in order), so the put-back must
 * not undo it (a rotation's final SET_ISSUER(new, none) under way while the
 * parking still names its previous key). */
async function pendingIssuerBody(on: Executor, moduleId: number): Promise<ControlBody | undefined> {
  const row = await on
    .selectFrom('control_commands')
    .select('body')
    .where('module_id', '=', moduleId)
    .where('kind', '=', 'SET_ISSUER')
    .where('state', '=', 'pending')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.body) as ControlBody);
}

/** How the run's own put-back of the issuer keys went. */
export type PutBack =
  /** Answered OK: the box holds the service's keys again. */
  | 'passed'
  /** The suite never sent a SET_ISSUER (or never started): nothing to put back. */
  | 'untouched'
  /** Not confirmed: the queued put-back goes out once the box is free. */
  | 'unsure';

export interface HoldEnd {
  readonly moduleId: number;
  readonly runId: string;
  readonly restoreId: number | null;
  readonly putBack: PutBack;
  /** The box's next control sequence at least (the suite's `control_seq.next`); null when unknown. */
  readonly nextControlSeq: number | null;
  readonly nowMs: number;
}

/** Ends the run's hold (see above). */
export async function releaseBox(store: Store, end: HoldEnd): Promise<void> {
  const commands = new ControlCommandRepository(store);
  await store.kysely.transaction().execute(async (trx) => {
    if (end.nextControlSeq !== null) await new ControlSequences(store).skipTo(end.moduleId, end.nextControlSeq, trx);
    if (end.restoreId !== null && end.putBack !== 'unsure')
      await commands.settleUnsent(
        end.restoreId,
        {
          state: 'done',
          status:
            end.putBack === 'passed'
              ? `put back by conformance run ${end.runId} (OK)`
              : `nothing to put back: conformance run ${end.runId} did not touch the issuer keys`,
          error: null,
          nextAttemptAt: end.nowMs,
          replays: 0,
        },
        end.nowMs,
        trx,
      );
    await new BoxHolds(store).release(end.moduleId, end.runId, trx);
  });
}

export interface HoldLeaseOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly moduleId: number;
  readonly runId: string;
  readonly leaseMs: number;
  /** The lease had passed at a renewal: the run must stop. */
  readonly onLost: () => void;
}

/** Renews the run's lease every third of it, on the injected clock, while
 * the run lasts. A renewal the database refuses is logged and tried again at
 * the next one (two more before the lease passes). */
export class HoldLease {
  readonly #holds: BoxHolds;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(private readonly options: HoldLeaseOptions) {
    this.#holds = new BoxHolds(options.store);
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.options.clock.setTimeout(() => void this.#renew(), Math.ceil(this.options.leaseMs / 3));
  }

  async #renew(): Promise<void> {
    const { clock, moduleId, runId, leaseMs, logger } = this.options;
    const now = clock.now();
    try {
      if (!(await this.#holds.renew(moduleId, runId, now, now + leaseMs))) {
        if (this.#stopped) return;
        logger.warn({ run_id: runId, module_id: moduleId }, 'conformance run lost its hold on the box');
        this.stop();
        this.options.onLost();
        return;
      }
    } catch (error) {
      logger.warn({ run_id: runId, module_id: moduleId, err: messageOf(error) }, 'conformance hold not renewed');
    }
    this.#schedule();
  }
}
