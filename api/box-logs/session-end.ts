// The end of a session by a verified exit (effects.ts): the ONE place the
// ingestion core ends a session, on the group commit's transaction.
//
// Until the session service's endSession is on the store (issue 18; branch
// store-sessions makes it `endSession(ctx, on: Executor, session, endMs,
// exitKey): Promise<EndResult>`), SQLite calls today's synchronous one (its
// statements run on the group commit's own transaction, the one connection),
// and PostgreSQL does what an exit needs (no exit key: exitKey is false) on
// `on`, but an overstay payment, which belongs to the payment provider.
// Switching: `sessionEnd` returns `(on, session, endMs) => endSession(ctx, on,
// session, endMs, false).then((ended) => ended.session)` on both engines,
// and `endOnPostgres` goes.
import type { EventPublisher } from '../events/types.js';
import type { Executor, Store } from '../db/store.js';
import type { SessionRow } from '../repositories/sessions.js';
import { endSession, type SessionServiceDeps } from '../sessions/service.js';
import { usedAmount } from '../sessions/pricing.js';

/** Ends `session` at `endMs` (the exit's time) on `on`; its row as ended, or
 * undefined when it had ended already (another process's exit or finalize). */
export type SessionEnd = (on: Executor, session: SessionRow, endMs: number) => Promise<SessionRow | undefined>;

export type SessionEndDeps =
  | { store: Extract<Store, { dialect: 'sqlite' }>; service: SessionServiceDeps }
  | {
      store: Extract<Store, { dialect: 'postgres' }>;
      events: Pick<EventPublisher, 'publishSession'>;
      clock: { now(): number };
    };

export function sessionEnd(deps: SessionEndDeps): SessionEnd {
  if ('service' in deps) {
    const { service } = deps;
    // SQLite only until the ingestion core moves to the store (issue 18)
    return (_on, session, endMs) => Promise.resolve(endSession(service, session, endMs, false).session);
  }
  return (on, session, endMs) => endOnPostgres(deps, on, session, endMs);
}

async function endOnPostgres(
  deps: { events: Pick<EventPublisher, 'publishSession'>; clock: { now(): number } },
  on: Executor,
  session: SessionRow,
  endMs: number,
): Promise<SessionRow | undefined> {
  const parking = await on
    .selectFrom('secured_parkings')
    .select('price_per_hour_minor')
    .where('id', '=', session.parking_id)
    .executeTakeFirst();
  if (!parking) throw new Error(`session ${session.id} lacks its parking`);
  const finalMinor = usedAmount(parking.price_per_hour_minor, endMs - session.start_time);
  const payments = await on
    .selectFrom('payments')
    .select(['amount_minor', 'state'])
    .where('session_id', '=', session.id)
    .execute();
  const covered = payments.reduce((sum, payment) => sum + payment.amount_minor, 0);
  if (finalMinor > covered)
    throw new Error(
      `session ${session.id}: an overstay payment on PostgreSQL waits for the session service on the store (issue 18)`,
    );
  const state = payments.every((payment) => payment.state === 'paid') ? 'finished' : 'exiting';
  // Conditional: a session another process ended meanwhile is left alone.
  const ended = await on
    .updateTable('parking_sessions')
    .set({ state, end_time: endMs, ended_at: deps.clock.now(), amount_minor: finalMinor })
    .where('id', '=', session.id)
    .where('ended_at', 'is', null)
    .returning([
      'id',
      'user_id',
      'parking_id',
      'state',
      'start_time',
      'end_time',
      'entrance_remaining_tries',
      'exit_remaining_tries',
      'amount_minor',
      'currency',
      'ended_at',
    ])
    .executeTakeFirst();
  if (ended === undefined) return undefined;
  deps.events.publishSession(session.id);
  return ended;
}
