// Waiting for a parking session's state, in the bench's own process: the
// session is read from the database as GET /api/operator/sessions shows it,
// once at first and again whenever the API's event hub has taken a new event
// (it takes one after every commit that changes a session), checked every
// few milliseconds: nothing is read while nothing happens.
import { setTimeout as delay } from 'node:timers/promises';
import type { Store } from '../api/db/store.js';
import { operatorSessionsById, type OperatorSession } from '../api/operators/views.js';
import type { SessionState } from '../api/sessions/index.js';

/** How often the event hub's newest id is looked at. */
const CHECK_EVERY_MS = 5;

export interface SessionWaitDeps {
  readonly store: Store;
  /** The API's event hub: its newest event's id grows with every event. */
  readonly events: { readonly headId: number };
  /** Aborted when the bench stops: a wait still going rejects. */
  readonly stopped: AbortSignal;
}

/** Resolves with the session once it is in `state`; rejects when it has
 * not reached it after `timeoutMs`, when it is finished (it changes no
 * more), when there is no such session, or when the bench stops. */
export async function waitForSessionState(
  deps: SessionWaitDeps,
  sessionId: number,
  state: SessionState,
  timeoutMs: number,
): Promise<OperatorSession> {
  const { store, events, stopped } = deps;
  const deadline = Date.now() + timeoutMs;
  const stoppedError = (): Error => new Error(`waitForSession(${sessionId}, '${state}'): the bench stopped`);
  // A function, not the property: the type checker would take it as still
  // false after the loop's own check, across the awaits that may change it.
  const isStopped = (): boolean => stopped.aborted;
  let seenHead: number | undefined;
  let current: OperatorSession | undefined;
  for (;;) {
    if (isStopped()) throw stoppedError();
    const head = events.headId;
    if (head !== seenHead) {
      seenHead = head;
      try {
        current = (await operatorSessionsById(store, [sessionId])).get(sessionId);
      } catch (error) {
        // The store closed under the read: the bench stopped, which is what to say.
        if (isStopped()) throw stoppedError();
        throw error;
      }
      if (current === undefined)
        throw new Error(`waitForSession(${sessionId}): there is no parking session ${sessionId}`);
      if (current.state === state) return current;
      if (current.state === 'finished')
        throw new Error(`waitForSession(${sessionId}): the session is finished, it will not be ${state}`);
    }
    if (Date.now() >= deadline)
      throw new Error(
        `waitForSession(${sessionId}): the session is still ${current?.state ?? 'unknown'}, not ${state}, after ${timeoutMs} ms`,
      );
    // Cut short by stop(): the loop's first line says so.
    await delay(CHECK_EVERY_MS, undefined, { signal: stopped }).catch(() => undefined);
  }
}
