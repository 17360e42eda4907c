// The bench a test holds: the fields of the `parkbench ready` line, and the
// helpers that drive it, named as the operator API names them (a box's
// `sim`, a session's `state`).
import type { OperatorSession } from '../api/operators/views.js';
import type { SessionState } from '../api/sessions/index.js';
import type { StateMessage } from '../lib/mqtt-messages.js';
import { parseSimSet, SimSetError, type SimSetMessage } from '../lib/sim-set.js';
import type { ReadyInfo, WholeBench } from '../whole-bench/index.js';
import { SESSION_STATES } from '../api/operators/schemas.js';
import { waitForSessionState } from './session-wait.js';

/** How long waitForSession waits unless told. */
const DEFAULT_WAIT_MS = 10_000;

export interface Bench extends Readonly<ReadyInfo> {
  /**
   * Sets a simulated box's faults and settings: a `sim/set` body, as
   * `POST /api/operator/boxes/:module_id/sim` and the box's MQTT topic
   * `parkbench/boxes/{module_id}/sim/set` take it (`{ jam: true }`,
   * `{ battery_mv: 3100 }`, `{ drop_commands: 1 }`, …). Resolves once the
   * box has it, with the box's state as it publishes it; rejects for a bad
   * field (naming it) or a box this bench does not simulate.
   */
  sim(moduleId: number, settings: SimSetMessage): Promise<StateMessage>;
  /**
   * Resolves with the parking session, as `GET /api/operator/sessions`
   * lists it, once its `state` is `state` (`entering`, `active`, `exiting`,
   * `finished`); rejects when it is not after `timeoutMs` (10 s), when it is
   * finished, or when there is no such session.
   */
  waitForSession(sessionId: number, state: SessionState, options?: { timeoutMs?: number }): Promise<OperatorSession>;
  /** Stops the boxes, the broker and the API, and removes the temporary
   * data folder; resolves once nothing of the bench is left open. Calling it
   * again returns the same promise. */
  stop(): Promise<void>;
}

export function benchOf(running: WholeBench, stopAll: () => Promise<void>): Bench {
  const { service, simulation } = running;
  const stopped = new AbortController();
  let stopping: Promise<void> | undefined;
  const refuseWhenStopped = (what: string): void => {
    if (stopped.signal.aborted) throw new Error(`${what}: the bench is stopped`);
  };
  return {
    ...running.info,
    sim(moduleId, settings) {
      return Promise.resolve().then(() => {
        refuseWhenStopped(`sim(${moduleId})`);
        let command;
        try {
          command = parseSimSet(settings);
        } catch (error) {
          if (error instanceof SimSetError) throw new Error(`sim(${moduleId}): ${error.message}`, { cause: error });
          throw error;
        }
        const box = simulation.box(moduleId);
        if (box === undefined || !simulation.simSet(moduleId, command)) {
          const simulated = simulation.boxes.map((entry) => entry.box.moduleId).join(', ');
          throw new Error(`sim(${moduleId}): no simulated box ${moduleId} on this bench (its boxes: ${simulated})`);
        }
        return box.snapshot();
      });
    },
    // Async, so that a wrong argument is a rejection too; the wait starts in
    // this call, and a stop() after it ends it.
    async waitForSession(sessionId, state, options = {}) {
      refuseWhenStopped(`waitForSession(${sessionId})`);
      if (!(SESSION_STATES as readonly string[]).includes(state))
        throw new Error(
          `waitForSession(${sessionId}): state must be one of ${SESSION_STATES.join(', ')}, got "${state}"`,
        );
      const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
      if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
        throw new Error(`waitForSession(${sessionId}): timeoutMs must be a number of ms, got ${String(timeoutMs)}`);
      return await waitForSessionState(
        { store: service.ctx.store, events: service.ctx.events, stopped: stopped.signal },
        sessionId,
        state,
        timeoutMs,
      );
    },
    stop() {
      stopping ??= (async () => {
        stopped.abort();
        await stopAll();
      })();
      return stopping;
    },
  };
}
