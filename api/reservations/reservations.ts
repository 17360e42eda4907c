// Reservations of a box (table box_reservations, repository.ts): an
// operator takes a box for a while, renews it, releases it; others wait
// for it in a first-come queue (the order of id), each waiting request
// open until its turn or the end of its wait.
//
// Every change runs in ONE write transaction that locks the box's row
// first and settles the box (repository.ts: what has passed deleted, a free
// box handed to the first live waiter): two takes of a free box, in this
// process or two processes on one PostgreSQL database, give it to exactly
// one; the other queues behind it (or, not waiting, is refused 409
// box_reserved).
//
// A waiting request is woken at once by a change of its box in this process
// (a release, an expiry, another waiter leaving); a change by another
// process it sees at its next poll (RESERVATION_POLL_MS, on the injected
// clock), which also moves its row's expires_at ahead (`waiterLeaseMs`), so
// the row of a waiter whose process died passes soon and leaves the queue. A
// client that disconnects leaves the queue at once (its row deleted, the
// box handed on when it had just got it). Its wait ends at wait_seconds, or
// when the API stops (`close`): 409 box_reserved either way, its row
// deleted.
//
// An expiry is noticed without a request: a timer on the injected clock
// (lib/deadline-sweep.ts) for the soonest expires_at of any held
// reservation settles the boxes whose reservation passed. Each change
// publishes the box anew (the page's entry), and tells `onEnd` listeners
// (the control dispatcher, which sends nothing to a held box) that the box
// may be free.
import type { Clock } from '../../lib/clock.js';
import { DeadlineSweep } from '../../lib/deadline-sweep.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import { retryingLostRaces } from '../db/lost-race.js';
import type { Executor, Store } from '../db/store.js';
import { conflict, notFound } from '../http/domain-error.js';
import type { EventPublisher } from '../events/types.js';
import { boxReserved } from './refusal.js';
import { ReservationRows, type Settled } from './repository.js';
import { hashReservationToken, newReservationToken, type ReservationToken } from './tokens.js';
import { viewOf, type ReservationRow, type ReservationView } from './view.js';

/** Requests waiting for one box at most: each is an open connection. */
export const MAX_WAITING_PER_BOX = 100;

export interface ReservationsOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** How often a waiting request reads the database, ms (RESERVATION_POLL_MS). */
  readonly pollMs: number;
  /** The event stream: each change publishes the box anew. */
  readonly events: Pick<EventPublisher, 'publishBox'>;
  readonly logger?: Logger;
}

export interface ReserveRequest {
  readonly moduleId: number;
  /** Who asks: the reservation is bound to this operator. */
  readonly operator: { readonly id: number; readonly name: string };
  readonly ttlMs: number;
  /** How long to wait in the queue for a held box; 0: answer at once. */
  readonly waitMs: number;
  /** The note; on a renewal, undefined keeps the one it has. */
  readonly note: string | null | undefined;
  /** Parkbench-Reservation, when sent: the caller's live reservation of the box renews it. */
  readonly token: string | undefined;
  /** Aborted when the client is gone (its connection closed): a waiting request leaves the queue. */
  readonly gone?: AbortSignal;
}

export interface Reserved {
  /** `taken`: the box is the caller's from now (201); `renewed`: its expiry moved (200). */
  readonly outcome: 'taken' | 'renewed';
  readonly token: string;
  readonly view: ReservationView;
}

/** What a transaction on a box decided, and the box's live rows after it. */
type Step =
  | { kind: 'taken' | 'renewed'; rows: ReservationRow[] }
  | { kind: 'queued'; id: number; rows: ReservationRow[] }
  | { kind: 'waiting' | 'refused' | 'left'; rows: ReservationRow[] };

/** Why a waiting request stopped napping. */
type Wakening = 'poked' | 'timer' | 'gone' | 'closed';

/** A waiting request of this process, poked by its box's changes. */
class Waiter {
  #poked = false;
  #wake: ((why: Wakening) => void) | undefined;

  constructor(
    readonly moduleId: number,
    private readonly clock: Clock,
  ) {}

  /** A change of its box (or the API stopping): a nap ends at once, or the next one does not start. */
  poke(): void {
    this.#poked = true;
    this.#wake?.('poked');
  }

  /** Until `ms` pass on the clock, a poke, the client gone, or the API closing. */
  nap(ms: number, gone: AbortSignal | undefined, closed: () => boolean): Promise<Wakening> {
    if (closed()) return Promise.resolve('closed');
    if (gone?.aborted === true) return Promise.resolve('gone');
    if (this.#poked) {
      this.#poked = false;
      return Promise.resolve('poked');
    }
    return new Promise((resolve) => {
      const finish = (why: Wakening): void => {
        this.#wake = undefined;
        this.clock.clearTimeout(timer);
        gone?.removeEventListener('abort', onGone);
        this.#poked = false;
        resolve(closed() ? 'closed' : why);
      };
      const onGone = (): void => finish('gone');
      const timer = this.clock.setTimeout(() => finish('timer'), Math.max(0, ms));
      gone?.addEventListener('abort', onGone, { once: true });
      this.#wake = finish;
    });
  }
}

export class Reservations {
  readonly #options: ReservationsOptions;
  readonly #rows: ReservationRows;
  readonly #logger: Logger;
  /** The waiting requests of this process, by box. */
  readonly #waiters = new Map<number, Set<Waiter>>();
  /** The waits under way, awaited by `close`. */
  readonly #waits = new Set<Promise<unknown>>();
  readonly #endListeners: ((moduleId: number) => void)[] = [];
  readonly #expiry: DeadlineSweep;
  #closed = false;

  constructor(options: ReservationsOptions) {
    this.#options = options;
    this.#rows = new ReservationRows(options.store);
    this.#logger = (options.logger ?? silentLogger).child({ component: 'api:reservations' });
    this.#expiry = new DeadlineSweep({
      clock: options.clock,
      soonest: () => this.#rows.soonestHeldExpiry(),
      sweep: (nowMs) => this.#settlePassed(nowMs),
      retryMs: options.pollMs,
      onError: (error, during) => {
        this.#logger.warn(
          { err: messageOf(error) },
          during === 'read'
            ? 'reservation expiries not read; read again at the next poll'
            : 'reservation expiries not settled; tried again at the next poll',
        );
      },
    });
  }

  /** How long a waiting row stays in the queue without its request's poll. */
  get waiterLeaseMs(): number {
    return Math.max(5_000, 4 * this.#options.pollMs);
  }

  /** Hears of a box whose reservation may have ended (a release, an expiry, a holder gone). */
  onEnd(listener: (moduleId: number) => void): void {
    this.#endListeners.push(listener);
  }

  /** Arms the expiry timer (reservations a previous run left included). */
  start(): void {
    this.#expiry.arm();
  }

  /** Ends every wait (each answers 409 box_reserved, its row deleted) and the expiry timer. */
  async close(): Promise<void> {
    this.#closed = true;
    const expiry = this.#expiry.close();
    for (const waiters of this.#waiters.values()) for (const waiter of waiters) waiter.poke();
    await Promise.allSettled([...this.#waits, expiry]);
  }

  /** The box's reservation now; not_found for an unknown box. */
  async view(moduleId: number): Promise<ReservationView | null> {
    const now = this.#options.clock.now();
    const rows = await this.#rows.liveRowsOf(moduleId, now);
    if (rows.length === 0 && !(await this.#rows.boxExists(moduleId)))
      throw notFound(`no box with module id ${moduleId}`);
    return viewOf(rows);
  }

  /** Takes the box, renews the caller's reservation of it, or waits for it
   * (see above). Refuses not_found for an unknown box, box_reserved when
   * the box is held and the wait (if any) ended first. */
  async reserve(request: ReserveRequest): Promise<Reserved> {
    const fresh = newReservationToken();
    const sentHash = request.token === undefined ? undefined : hashReservationToken(request.token);
    const first = await this.#onBox(request.moduleId, async (on, now) => {
      if (sentHash !== undefined) {
        const mine = await this.#rows.byTokenHash(sentHash, on);
        if (mine !== undefined && isLiveHeldOf(mine, request, now)) {
          await this.#rows.renew(mine.id, now, request.ttlMs, request.note, on);
          return { kind: 'renewed', rows: await this.#rows.liveRowsOf(request.moduleId, now, on) };
        }
      }
      return this.#enter(on, now, request, fresh, request.waitMs > 0);
    });
    if (first.kind === 'renewed') return this.#answer('renewed', request.token ?? '', first.rows);
    if (first.kind === 'taken') return this.#answer('taken', fresh.token, first.rows);
    if (first.kind !== 'queued') throw refusalOf(first.rows);
    const wait = this.#wait(request, fresh, first.id);
    this.#waits.add(wait);
    try {
      return await wait;
    } finally {
      this.#waits.delete(wait);
    }
  }

  /** Ends the caller's reservation of the box; the first in its queue gets
   * it. not_found when `token` is not a live reservation of this box and
   * operator (or there is no such box). */
  async release(moduleId: number, operatorId: number, token: string): Promise<void> {
    const hash = hashReservationToken(token);
    await this.#onBox(moduleId, async (on, now) => {
      const mine = await this.#rows.byTokenHash(hash, on);
      if (mine === undefined || !isLiveHeldOf(mine, { moduleId, operator: { id: operatorId } }, now))
        throw notFound(`no live reservation of box ${moduleId} with this token for this operator`);
      await this.#rows.deleteById(mine.id, on);
      await this.#rows.settle(moduleId, now, on);
      return { kind: 'left', rows: [] };
    });
  }

  /** A new request's place: the box when it is free (nobody holds it nor
   * waits), else the queue's tail when it waits, else a refusal. */
  async #enter(
    on: Executor,
    now: number,
    request: ReserveRequest,
    token: ReservationToken,
    waits: boolean,
  ): Promise<Step> {
    const { moduleId } = request;
    const live = await this.#rows.liveRowsOf(moduleId, now, on);
    if (live.length > 0 && !waits) return { kind: 'refused', rows: live };
    if (live.filter((row) => row.state === 'waiting').length >= MAX_WAITING_PER_BOX)
      throw conflict(`${MAX_WAITING_PER_BOX} requests wait for box ${moduleId} already: try again later`);
    const held = live.length === 0;
    const id = await this.#rows.insert(
      {
        module_id: moduleId,
        token_hash: token.hash,
        operator_id: request.operator.id,
        holder: request.operator.name,
        note: request.note ?? null,
        state: held ? 'held' : 'waiting',
        ttl_ms: request.ttlMs,
        queued_at: now,
        held_since: held ? now : null,
        expires_at: now + (held ? request.ttlMs : this.waiterLeaseMs),
      },
      on,
    );
    const rows = await this.#rows.liveRowsOf(moduleId, now, on);
    return held ? { kind: 'taken', rows } : { kind: 'queued', id, rows };
  }

  /** A queued request until its turn (taken), the end of its wait, the
   * client gone or the API closing (409 box_reserved, its row deleted). */
  async #wait(request: ReserveRequest, token: ReservationToken, rowId: number): Promise<Reserved> {
    const { clock, pollMs } = this.#options;
    const { moduleId } = request;
    const deadline = clock.now() + request.waitMs;
    const waiter = new Waiter(moduleId, clock);
    let waiters = this.#waiters.get(moduleId);
    if (waiters === undefined) this.#waiters.set(moduleId, (waiters = new Set()));
    waiters.add(waiter);
    let id = rowId;
    try {
      for (;;) {
        const remaining = deadline - clock.now();
        const why: Wakening =
          remaining <= 0 ? 'timer' : await waiter.nap(Math.min(pollMs, remaining), request.gone, () => this.#closed);
        const ending = why === 'gone' || why === 'closed' || clock.now() >= deadline;
        let step: Step;
        try {
          step = await this.#onBox(moduleId, async (on, now) => {
            const mine = await this.#rows.byId(id, on);
            if (why === 'gone') {
              // Whether it waited or had just got the box: the client will never hear of it.
              if (mine !== undefined) await this.#rows.deleteById(mine.id, on);
              await this.#rows.settle(moduleId, now, on);
              return { kind: 'left', rows: await this.#rows.liveRowsOf(moduleId, now, on) };
            }
            if (mine?.state === 'held') return { kind: 'taken', rows: await this.#rows.liveRowsOf(moduleId, now, on) };
            if (ending) {
              if (mine !== undefined) await this.#rows.deleteById(mine.id, on);
              return { kind: 'left', rows: await this.#rows.liveRowsOf(moduleId, now, on) };
            }
            // Its row passed (this process stalled past the lease): back in the queue, at its tail.
            if (mine === undefined) return this.#enter(on, now, request, token, true);
            await this.#rows.keepWaiting(mine.id, now + this.waiterLeaseMs, on);
            return { kind: 'waiting', rows: [] };
          });
        } catch (error) {
          if (!ending) {
            this.#logger.warn(
              { module_id: moduleId, err: messageOf(error) },
              'reservation queue not read; read again at the next poll',
            );
            continue;
          }
          throw error;
        }
        if (step.kind === 'taken') return this.#answer('taken', token.token, step.rows);
        if (step.kind === 'queued') id = step.id;
        if (step.kind === 'left') {
          throw refusalOf(step.rows, LEFT_BECAUSE[why]);
        }
      }
    } finally {
      waiters.delete(waiter);
      if (waiters.size === 0) this.#waiters.delete(moduleId);
    }
  }

  /** `work` in one write transaction on the box (its row locked, then
   * settled); not_found for an unknown box. After the commit, a change
   * (what `work` says, or the settle's) is published. */
  async #onBox(moduleId: number, work: (on: Executor, now: number) => Promise<Step>): Promise<Step> {
    const { store, clock } = this.#options;
    const { step, settled } = await retryingLostRaces(() =>
      store.kysely.transaction().execute(async (on) => {
        const now = clock.now();
        if (!(await this.#rows.lockBox(moduleId, on))) throw notFound(`no box with module id ${moduleId}`);
        const settledNow = await this.#rows.settle(moduleId, now, on);
        return { step: await work(on, now), settled: settledNow };
      }),
    );
    if (step.kind !== 'waiting' && step.kind !== 'refused') this.#changed(moduleId);
    else if (changedBy(settled)) this.#changed(moduleId);
    return step;
  }

  /** The box changed: its entry published anew, its waiters here poked,
   * the dispatcher told, the expiry timer set again. */
  #changed(moduleId: number): void {
    this.#options.events.publishBox(moduleId);
    for (const waiter of this.#waiters.get(moduleId) ?? []) waiter.poke();
    for (const listener of this.#endListeners) listener(moduleId);
    this.#expiry.arm();
  }

  #answer(outcome: Reserved['outcome'], token: string, rows: readonly ReservationRow[]): Reserved {
    const view = viewOf(rows);
    if (view === null) throw new Error('a reservation taken or renewed has no held row');
    return { outcome, token, view };
  }

  /** Settles every box whose held reservation has passed (the expiry sweep's work). */
  async #settlePassed(nowMs: number): Promise<void> {
    for (const moduleId of await this.#rows.boxesWithPassedHolds(nowMs))
      await this.#onBox(moduleId, () => Promise.resolve({ kind: 'waiting', rows: [] }));
  }
}

/** How a wait's refusal ends its sentence. */
const LEFT_BECAUSE: Record<Wakening, string> = {
  poked: 'the wait ended before it was released',
  timer: 'the wait ended before it was released',
  gone: 'the client left the queue',
  closed: 'the API is stopping, which ends every wait',
};

function isLiveHeldOf(
  row: ReservationRow,
  request: { readonly moduleId: number; readonly operator: { readonly id: number } },
  now: number,
): boolean {
  return (
    row.module_id === request.moduleId &&
    row.operator_id === request.operator.id &&
    row.state === 'held' &&
    row.expires_at > now
  );
}

function changedBy(settled: Settled): boolean {
  return settled.expired > 0 || settled.abandoned > 0 || settled.promoted !== undefined;
}

/** 409 box_reserved naming the holder (the first live row when, for an instant, nobody holds it). */
function refusalOf(rows: readonly ReservationRow[], why?: string): Error {
  const held = rows.find((row) => row.state === 'held') ?? rows[0];
  if (held === undefined) return conflict('the wait ended as the box was released: ask again');
  return boxReserved(held, why);
}
