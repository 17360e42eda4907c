// What the operator API and its event stream send, as the page reads it
// (docs/api.md, "Operator API"; the contract of the bench page). Written out
// here rather than imported from api/: the page runs in a browser and may
// import nothing of the Node code, and these are only the fields it shows.
// test/bench-page/payload-types.ts fails `npm run typecheck` when they
// drift from the API's payload types and response schemas.

export const BARRIERS = ['closed', 'opening', 'open', 'closing', 'fault'] as const;
export type Barrier = (typeof BARRIERS)[number];
export type Availability = 'online' | 'offline' | 'unknown';

/** A box's newest published MQTT state (`parkbench/boxes/{id}/state`), as the stream carries it. */
export interface LiveState {
  barrier: Barrier;
  battery_mv: number | null;
  box_time: string | null;
  box_seq: number | null;
  /** The faults switched on, as the box names them (`jam`, `delay_ms=3000`, ...); empty when none. */
  faults: readonly string[];
  updated_at: string;
}

export interface LastResponse {
  box_log_id: number;
  status: string | null;
  barrier: Barrier | null;
  via: 'http' | 'mqtt';
  received_at: string;
}

/** A smart key revoked at the service that a box still takes (its REVOKE failed or was skipped). */
export interface MissingRevocation {
  smart_key_id: number;
  /** When the box stops taking the key by itself (the key's end plus the box's skew). */
  open_until: string;
  /** Why its REVOKE did not reach the box (`REVOCATION_FULL: ...`, `skipped by ...`). */
  last_error: string | null;
}

export interface Box {
  module_id: number;
  parking_id?: number;
  direction: string;
  /** Played by parkbench's simulator; false: hardware. */
  simulated: boolean;
  mac_address: string;
  last_seen_at: string | null;
  battery_mv: number | null;
  box_time_drift_seconds: number | null;
  last_box_seq: number | null;
  pending_control_commands: unknown[];
  last_response: LastResponse | null;
  availability: Availability;
  availability_reason: string | null;
  availability_since: string | null;
  gateway_id: string | null;
  /** The revoked keys the box still takes: the box is at risk while this is not empty. */
  revocations_missing: MissingRevocation[];
  /** What the operator can do about them, one sentence; null when none. */
  remedy: string | null;
  live?: LiveState | null;
  /** Who holds the box and who waits for it; null when it is free. */
  reservation: Reservation | null;
}

/** One operator waiting for a held box, first come first. */
export interface ReservationWaiter {
  holder: string;
  note: string | null;
  since: string;
}

/** A box's reservation (GET /api/operator/boxes/:id/reservation, and each box's entry on the stream). */
export interface Reservation {
  module_id: number;
  /** The operator who holds it. */
  holder: string;
  note: string | null;
  since: string;
  expires_at: string;
  ttl_seconds: number;
  queue: ReservationWaiter[];
}

export interface Parking {
  id: number;
  name: string;
  description?: string | null;
  currency: string;
  price_per_hour: string;
  is_online: boolean;
  access_mode: 'sealed' | 'signed';
  boxes: Box[];
}

export interface Session {
  id: number;
  user_id: number;
  email: string;
  parking_id: number;
  state: 'entering' | 'active' | 'exiting' | 'finished';
  start_time: string;
  end_time: string;
  entrance_remaining_tries?: number;
  exit_remaining_tries?: number;
  amount: string;
  currency: string;
  ended_at: string | null;
  /** The driver's name, as registered (shown as text). */
  first_name: string;
  last_name: string;
  /** Every smart key of the session, oldest first: what its revoke button revokes. */
  smart_key_ids: number[];
}

export interface BoxLog {
  id: number;
  source: 'http' | 'mqtt';
  equipment_id: number;
  secured_parking_id: number;
  smart_key_id?: number | null;
  session_id?: number | null;
  type: string;
  created_at?: string;
  verified: boolean;
  box_seq?: number | null;
  status: string | null;
  received_at: string;
  via?: 'http' | 'mqtt';
  latency_ms?: number | null;
}

/** One URL's forwarding (GET /api/operator/parkings/:id/forwarding items). */
export interface ForwardingStatus {
  parking_id: number;
  url?: string;
  pending: number;
  delivered: number;
  dead: number;
  last_error?: string | null;
  disabled_at?: string | null;
}

export type ConformanceResult = 'pass' | 'fail' | 'skip';

export interface ConformanceCase {
  name: string;
  step?: string;
  expected?: string;
  got?: string;
  result: ConformanceResult;
  reason?: string | null;
  ms?: number;
}

export interface ConformanceRun {
  id: string | number;
  module_id: number;
  state: 'running' | 'passed' | 'failed' | 'error';
  started_at: string;
  ended_at: string | null;
  /** Why it ended in error (the API stopped, cancelled by an operator, ...); null otherwise. */
  error?: string | null;
  cases: ConformanceCase[];
  summary?: Record<string, unknown>;
}

export type RunState = 'running' | 'passed' | 'failed' | 'error';

/** A kept run (GET /api/operator/runs items; with `results` in GET /runs/:id and the stream's `run` events). */
export interface RunView {
  id: string;
  module_id: number;
  kind: 'conformance' | 'soak';
  source: 'page' | 'api' | 'cli' | 'ci';
  /** The operator who started it. */
  started_by: string;
  state: RunState;
  target: string;
  /** Firmware, hardware, ci_job_url, ...: text its starter chose. */
  labels: Record<string, string>;
  started_at: string;
  ended_at: string | null;
  /** To ended_at, or to the time of the answer while it runs. */
  duration_ms: number;
  error: string | null;
  summary: Record<string, unknown> | null;
  results?: RunResultView[];
}

/** A case of a conformance run, or a limit of a soak run. */
export interface RunResultView {
  name: string;
  result: ConformanceResult;
  reason: string | null;
  ms: number;
  /** A soak limit's measured figure; null for a case. */
  value: number | null;
}

/** GET /api/operator/runs: newest first, a page at a time. */
export interface RunPage {
  runs: RunView[];
  next_cursor: string | null;
}

export type CaseChange = 'regressed' | 'fixed' | 'same' | 'new' | 'gone';

export interface ComparedResult {
  result: ConformanceResult;
  reason: string | null;
  ms: number;
  value: number | null;
}

/** GET /api/operator/runs/compare?a=&b=: a the base, b the other. */
export interface RunComparison {
  a: RunView;
  b: RunView;
  /** Regressed first, then fixed, new, gone, same (the API orders them). */
  cases: {
    name: string;
    change: CaseChange;
    a: ComparedResult | null;
    b: ComparedResult | null;
    ms_delta: number | null;
  }[];
  counts: Record<CaseChange, number>;
  figures: { name: string; a: number | null; b: number | null; delta: number | null }[];
}

export interface ControlDelivery {
  module_id: number;
  operation_id?: number | string | null;
  kind: string;
  outcome: string;
  status?: string | null;
  at: string;
}

export interface Snapshot {
  server_time: string;
  parkings: Parking[];
  /** The newest 200 sessions of the day, at most. */
  sessions: Session[];
  /** How many sessions the day has (absent from an older server: `sessions` is all of them). */
  sessions_total?: number;
  /** True when `sessions` holds only the newest of them. */
  sessions_truncated?: boolean;
  box_logs: BoxLog[];
  forwarding: ForwardingStatus[];
}

/** The registry's error body (api/errors.ts). */
export interface ApiErrorBody {
  error: string;
  message: string;
}
