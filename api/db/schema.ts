// The tables as Kysely sees them: one description of every row for both
// engines, so a query written once is typed once, and every row type of the
// repositories is derived from it (Selectable, Pick). It mirrors the schema
// at the last version (api/db/migrations/); test/api/db/schema-types.test.ts
// compares its columns with both databases' own, so a migration that adds a
// column without it here fails.
//
// Value types are what both drivers return: ids, times (ms since the epoch)
// and other bigint columns are numbers (the pg pool parses int8 as a Number,
// api/db/postgres-pool.ts), flags are 0/1 numbers on both, BLOB/bytea is a
// Buffer. `Generated` marks a column the database fills when an insert
// leaves it out (an identity, a DEFAULT).
import type { ColumnType, Generated } from 'kysely';
import type { BoxDirection } from '../../firmware-protocol/index.js';

/** A column the database fills by default but an insert may set. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** Columns of a LEFT JOIN's right side: each null when no row matched. */
export type OuterJoined<Row> = { [Column in keyof Row]: Row[Column] | null };

export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: Defaulted<string>;
}

export interface ClientAppsTable {
  id: Generated<number>;
  name: string;
  client_app_id: string;
  client_secret_hash: string;
  created_at: number;
}

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  phone: string;
  created_at: number;
}

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  client_app_id: number;
  access_token_hash: Buffer;
  refresh_token_hash: Buffer;
  access_expires_at: number;
  refresh_expires_at: number;
  created_at: number;
  revoked_at: number | null;
  /** The id of the family's first pair (the login); rotation keeps it. Null
   * only inside the transaction that inserts the pair. */
  family_id: number | null;
}

export interface SecuredParkingsTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  currency: string;
  price_per_hour_minor: number;
  max_duration_minutes: number;
  tries: number;
  is_online: Defaulted<number>;
  is_active: Defaulted<number>;
  access_mode: 'sealed' | 'signed';
  /** K_park: set for a sealed parking; null for a signed one created signed. */
  parking_key: string | null;
  parking_key_next: string | null;
  /** The P-256 scalar (64 hex) smart keys are signed with; never leaves the database. */
  issuer_private_key: string | null;
  /** X || Y (128 hex) of issuer_private_key. */
  issuer_public_key: string | null;
  /** The key boxes keep as issuer_key_previous after a rotation. */
  issuer_previous_public_key: string | null;
  /** A pair being installed on the boxes (SET_ISSUER) that signs nothing yet. */
  issuer_next_private_key: string | null;
  issuer_next_public_key: string | null;
  forwarding_url: string | null;
  forwarding_expose: Defaulted<number>;
  /** The parking's Standard Webhooks secret (whsec_..., or an older one, api/forwarding/signature.ts). */
  forwarding_secret: string | null;
  /** 1: unverified box logs are forwarded too (each record says `verified`). */
  forwarding_unverified: Defaulted<number>;
  created_at: number;
  /** The secret a rotation replaced: it signs too until forwarding_previous_secret_until (ms). */
  forwarding_previous_secret: string | null;
  forwarding_previous_secret_until: number | null;
  /** 1: the rotation under way re-signs the live smart keys (api/control/re-sign.ts). */
  issuer_re_sign: Defaulted<number>;
}

export interface BoxesTable {
  id: Generated<number>;
  module_id: number;
  parking_id: number;
  direction: BoxDirection;
  mac_address: string;
  box_key: string;
  mqtt_username: string;
  mqtt_password_hash: string;
  skew_seconds: Defaulted<number>;
  min_battery_mv: Defaulted<number>;
  next_control_seq: Defaulted<number>;
  created_at: number;
  last_seen_at: number | null;
  last_box_seq: number | null;
  last_box_time: number | null;
  box_time_drift_seconds: number | null;
  battery_mv: number | null;
  last_control_seq: number | null;
  /** 1: parkbench's simulator plays the box (the demo's, a fleet's, `admin box add --simulated`); 0: hardware. */
  simulated: Defaulted<number>;
}

export interface DemoTable {
  id: number;
  client_app_row_id: number;
  client_secret: string;
  user_id: number;
  driver_password: string;
  parking_id: number;
}

export interface MqttClientsTable {
  id: Generated<number>;
  name: string;
  role: 'gateway' | 'operator';
  username: string;
  password_hash: string;
  created_at: number;
}

export interface ParkingSessionsTable {
  id: Generated<number>;
  user_id: number;
  parking_id: number;
  state: 'entering' | 'active' | 'exiting' | 'finished';
  start_time: number;
  end_time: number;
  entrance_remaining_tries: number;
  exit_remaining_tries: number;
  amount_minor: number;
  currency: string;
  ended_at: number | null;
  created_at: number;
}

export interface OperatorsTable {
  id: Generated<number>;
  name: string;
  token_hash: Buffer;
  created_at: number;
}

export interface SmartKeysTable {
  /** The 32-bit key id of the ACCESS frames, chosen by the service. */
  id: number;
  user_id: number | null;
  parking_id: number;
  session_id: number | null;
  operator_id: number | null;
  type: string;
  description: string | null;
  purpose: 'session' | 'exit' | 'operator';
  access_command: Buffer;
  module_ids: string;
  start_time: number;
  end_time: number;
  created_at: number;
  signed_by: string | null;
  revoked_at: number | null;
}

export interface PaymentsTable {
  id: Generated<number>;
  session_id: number;
  provider: string;
  token: string;
  purpose: 'session' | 'overstay';
  amount_minor: number;
  currency: string;
  state: 'pending' | 'paid' | 'declined';
  created_at: number;
  updated_at: number;
}

export interface BoxLogsTable {
  id: Generated<number>;
  source: 'http' | 'mqtt';
  fo_user_id: number | null;
  smart_key_id: number | null;
  equipment_id: number;
  secured_parking_id: number;
  type: 'in' | 'out' | 'control';
  command: string | null;
  command_decrypted: string | null;
  response: string | null;
  response_decrypted: string | null;
  offline: number;
  created_at: string;
  latitude: number | null;
  longitude: number | null;
  verified: number;
  box_seq: number | null;
  status: number | null;
  received_at: number;
  /** An unverified MQTT log: SHA-256 (hex) of its box and message, stored once. */
  message_digest: string | null;
}

export interface ForwardingDeliveriesTable {
  id: string;
  parking_id: number;
  url: string;
  state: 'pending' | 'delivered' | 'dead';
  attempts: Defaulted<number>;
  next_attempt_at: number;
  oldest_record_at: number;
  last_attempt_at: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
}

export interface ForwardingOutboxTable {
  id: Generated<number>;
  box_log_id: number;
  parking_id: number;
  url: string;
  delivery_id: string | null;
  created_at: number;
}

export interface ControlCommandsTable {
  id: Generated<number>;
  module_id: number;
  kind: 'REVOKE' | 'SET_ISSUER';
  body: string;
  operation: string;
  purpose: 'revoke' | 'set_access' | 'rotate_install' | 'rotate_drop' | 'restore';
  parking_id: number;
  smart_key_id: number | null;
  requested_by: string;
  state: Defaulted<'pending' | 'done' | 'failed' | 'skipped'>;
  attempts: Defaulted<number>;
  replays: Defaulted<number>;
  control_seq: number | null;
  /** 24 hex digits: the nonce of the frame sent last. */
  sent_nonce: string | null;
  in_flight_until: number | null;
  next_attempt_at: number;
  last_status: string | null;
  last_error: string | null;
  last_attempt_at: number | null;
  created_at: number;
  finished_at: number | null;
}

/** A box held by a conformance run: no control command goes to it while held_until (ms) is ahead. */
export interface BoxHoldsTable {
  module_id: number;
  holder: string;
  held_until: number;
  created_at: number;
}

export interface RunsTable {
  /** Random, base64url: the run's id in every route. */
  id: string;
  module_id: number;
  kind: 'conformance' | 'soak';
  /** Where it was started: the bench page, the operator API, the command line, a CI job's command line. */
  source: 'page' | 'api' | 'cli' | 'ci';
  /** The operator's name. */
  started_by: string;
  state: 'running' | 'passed' | 'failed' | 'error';
  /** The link the run reached the box by: mqtt, serial, ble. */
  target: string;
  started_at: number;
  ended_at: number | null;
  error: string | null;
  /** JSON: the run's options as its kind names them. */
  options: string;
  /** JSON: the run's summary once it has ended. */
  summary: string | null;
  /** JSON: what the run's files are rendered from (a conformance SuiteReport: summary, interrupted, results). */
  report: string | null;
  /** JSON: the capture files the run wrote, as paths on the machine that ran it. */
  captures: Generated<string>;
  updated_at: number;
}

export interface RunResultsTable {
  run_id: string;
  /** 0, 1, ... in the order the results ended. */
  position: number;
  /** The case's name, or the soak limit's expression. */
  name: string;
  result: 'pass' | 'fail' | 'skip';
  reason: string | null;
  ms: number;
  /** A soak limit's measured figure; null for a case. */
  value: number | null;
  /** JSON: the rest of the result as its kind writes it (step, expected, got, wearing; or the limit's fields). */
  details: string;
}

export interface RunLabelsTable {
  run_id: string;
  name: string;
  value: string;
}

export interface BoxReservationsTable {
  id: Generated<number>;
  module_id: number;
  /** SHA-256 of the token, hex. */
  token_hash: string;
  operator_id: number;
  /** The operator's name. */
  holder: string;
  note: string | null;
  state: 'held' | 'waiting';
  ttl_ms: number;
  queued_at: number;
  held_since: number | null;
  expires_at: number;
}

export interface ForwardingDisabledUrlsTable {
  parking_id: number;
  url: string;
  disabled_at: number;
  reason: string;
}

export interface BoxAvailabilityTable {
  module_id: number;
  availability: 'online' | 'offline' | 'unknown';
  reason: string | null;
  since: number | null;
  gateway_id: string | null;
  updated_at: number;
}

export interface EventTicketsTable {
  id: Generated<number>;
  ticket_hash: Buffer;
  operator_id: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** One login attempt in one scope (api/auth/login-limiter.ts): in flight or failed. */
export interface LoginAttemptsTable {
  id: Generated<number>;
  scope: 'username' | 'address';
  /** The username trimmed and lowercased, or the client address. */
  key: string;
  started_at: number;
  state: 'in_flight' | 'failed';
  /** When an attempt still in flight stops counting (its process died mid-login). */
  abandoned_at: number;
}

/** A driver's token bucket of session creations (api/sessions/create-limit.ts). */
export interface SessionCreateLimitsTable {
  user_id: number;
  /** When the bucket is full again, ms since the epoch. */
  full_at: number;
}

/** Every table, by name: Kysely<Schema> types every query of both engines. */
export interface Schema {
  migrations: MigrationsTable;
  client_apps: ClientAppsTable;
  users: UsersTable;
  tokens: TokensTable;
  secured_parkings: SecuredParkingsTable;
  boxes: BoxesTable;
  demo: DemoTable;
  mqtt_clients: MqttClientsTable;
  parking_sessions: ParkingSessionsTable;
  operators: OperatorsTable;
  smart_keys: SmartKeysTable;
  payments: PaymentsTable;
  box_logs: BoxLogsTable;
  forwarding_deliveries: ForwardingDeliveriesTable;
  forwarding_outbox: ForwardingOutboxTable;
  control_commands: ControlCommandsTable;
  box_holds: BoxHoldsTable;
  runs: RunsTable;
  run_results: RunResultsTable;
  run_labels: RunLabelsTable;
  box_reservations: BoxReservationsTable;
  forwarding_disabled_urls: ForwardingDisabledUrlsTable;
  box_availability: BoxAvailabilityTable;
  event_tickets: EventTicketsTable;
  login_attempts: LoginAttemptsTable;
  session_create_limits: SessionCreateLimitsTable;
}
