// What the event hub carries (the operator's live event stream):
// the raw events domain code publishes, and the narrow publisher interface
// it is handed in its `*Deps`. A raw event is small and built without JSON
// or a database read: most name what changed (a box, a session, a parking's
// forwarding) and the stream renders its newest state once per flush; a box
// log and a control delivery carry their item, which nothing else could
// rebuild later.
import type { StatusName } from '../../firmware-protocol/index.js';

/** How a box log came: POST /api/box_logs or MQTT ingestion. */
export type BoxLogSource = 'http' | 'mqtt';

/** A stored box log as the stream shows it: the GET /api/operator/box_logs
 * item plus how it came (`via`) and `latency_ms` (received_at minus
 * created_at; null when created_at says nothing usable). */
export interface BoxLogStreamItem {
  id: number;
  source: BoxLogSource;
  equipment_id: number;
  secured_parking_id: number;
  fo_user_id: number | null;
  smart_key_id: number | null;
  session_id: number | null;
  type: string;
  command: string | null;
  response: string | null;
  offline: boolean;
  created_at: string;
  verified: boolean;
  box_seq: number | null;
  status: StatusName | null;
  received_at: string;
  via: BoxLogSource;
  latency_ms: number | null;
}

/** A control command delivered, answered or failed (REVOKE, SET_ISSUER, operator commands). */
export interface ControlDelivery {
  module_id: number;
  /** The operation it belongs to (control_commands.operation), or a command's own id. */
  operation_id: string;
  kind: string;
  /** sent, delivered (done), failed, unanswered (tried again later), answered (still pending). */
  outcome: string;
  /** The protocol status name of the answer, null without one. */
  status: string | null;
  /** ISO time. */
  at: string;
}

/** A conformance run as CONFORMANCE's routes show it (ConformanceRunView);
 * only `id` is read here, the rest is sent as it is. No index signature: an
 * interface such as ConformanceRunView would not satisfy one. */
export interface ConformanceRunLike {
  readonly id: string | number;
}

/** A kept run as api/runs/ shows it (RunView with its results); only `id`
 * is read here, the rest is sent as it is. */
export interface RunLike {
  readonly id: string;
}

export type RawEvent =
  | { readonly id: number; readonly at: number; readonly kind: 'box'; readonly moduleId: number }
  | { readonly id: number; readonly at: number; readonly kind: 'box_log'; readonly item: BoxLogStreamItem }
  | { readonly id: number; readonly at: number; readonly kind: 'session'; readonly sessionId: number }
  | { readonly id: number; readonly at: number; readonly kind: 'forwarding'; readonly parkingId: number }
  | { readonly id: number; readonly at: number; readonly kind: 'control'; readonly delivery: ControlDelivery }
  | { readonly id: number; readonly at: number; readonly kind: 'conformance'; readonly run: ConformanceRunLike }
  | { readonly id: number; readonly at: number; readonly kind: 'run'; readonly run: RunLike };

/** What domain code calls where things happen. Each is cheap (an object in
 * a ring buffer); inside a group commit unit it waits for the COMMIT, so a
 * rolled-back log is never shown. */
export interface EventPublisher {
  /** Box logs stored (HTTP and MQTT alike); their boxes' state changed too when verified. */
  publishBoxLogs(items: readonly BoxLogStreamItem[]): void;
  /** A box's state or availability changed (its entry is rendered anew). */
  publishBox(moduleId: number): void;
  /** A session's state, tries or amount changed. */
  publishSession(sessionId: number): void;
  /** A parking's forwarding changed (queued, delivered, failed, revived). */
  publishForwarding(parkingId: number): void;
  /** A control command was delivered, answered or failed. */
  publishControl(delivery: ControlDelivery): void;
  /** A conformance run changed (a case ended, the run ended): its newest state. */
  publishConformance(run: ConformanceRunLike): void;
  /** A kept run changed (started, results recorded, ended): its newest state with its results. */
  publishRun(run: RunLike): void;
}

/** For callers with no stream (admin CLI, benches): publishes nothing. */
export const noEvents: EventPublisher = {
  publishBoxLogs: () => undefined,
  publishBox: () => undefined,
  publishSession: () => undefined,
  publishForwarding: () => undefined,
  publishControl: () => undefined,
  publishConformance: () => undefined,
  publishRun: () => undefined,
};
