// Every setting of the API, once: its environment variable (the flag is its
// kebab-case form), its default as an operator would write it, its parser
// (the validation and the type), and its meaning as docs/operations.md shows
// it (the first clause is the --help line). The ApiConfig type, DEFAULTS,
// the flags of `parkbench api` and the settings table of the document are
// all derived from this table.
import {
  boolean,
  clientId,
  integer,
  logLevel,
  optionalText,
  optionalUrl,
  schemeList,
  sharedGroup,
  text,
  topicPrefix,
  url,
  type Parser,
} from './parsers.js';
import { postgresUrl } from './postgres-url.js';

export interface Setting<T, V extends string = string> {
  /** Environment variable, e.g. `DATABASE_PATH` (flag: `--database-path`). */
  readonly variable: V;
  /** As an operator would write it; empty: unset (or derived, see shownDefault). */
  readonly default: string;
  readonly parse: Parser<T>;
  /** Markdown: the meaning column of docs/operations.md; its first clause is the --help line. */
  readonly meaning: string;
  /** Markdown: the default column, where the default is derived or differs by command. */
  readonly shownDefault?: string;
}

function setting<T, V extends string>(definition: Setting<T, V>): Setting<T, V> {
  return Object.freeze(definition);
}

export const SETTINGS = Object.freeze({
  host: setting({
    variable: 'HOST',
    default: '127.0.0.1',
    parse: text,
    meaning: 'address the API and its embedded MQTT broker listen on',
  }),
  port: setting({
    variable: 'PORT',
    default: '3000',
    parse: integer(0, 65535),
    meaning: 'HTTP port (0: any free port)',
  }),
  publicUrl: setting({
    variable: 'PUBLIC_URL',
    default: '', // derived from HOST and PORT by loadConfig
    shownDefault: '`http://HOST:PORT`',
    parse: url(['http:', 'https:']),
    meaning: 'base of links given to phones',
  }),
  databasePath: setting({
    variable: 'DATABASE_PATH',
    default: './data/parkbench.sqlite',
    shownDefault: '`./data/parkbench.sqlite` (`parkbench start`: `DATA_DIR/parkbench.sqlite`)',
    parse: text,
    meaning:
      'the SQLite file (it and its folder are created by the API, `start` and admin commands that write; see [Operator CLI](#operator-cli) for what is refused); unused when `DATABASE_URL` is set ([Which database](#which-database))',
  }),
  databaseUrl: setting({
    variable: 'DATABASE_URL',
    default: '',
    parse: postgresUrl,
    meaning:
      'a PostgreSQL database (13 or newer) instead of the SQLite file: `postgres://user:password@host:port/database` (or `postgresql://`; `?sslmode=disable`, `require` or `verify-full`, nothing else); checked at start (a bad one stops the API, its password masked in the message), migrated at start under a lock; `--database postgres://...` means the same. See [Running beyond one machine](beyond-one-machine.md)',
  }),
  databaseBusyTimeoutMs: setting({
    variable: 'DATABASE_BUSY_TIMEOUT_MS',
    default: '5000',
    parse: integer(0, 600_000),
    meaning:
      'how long a write waits for a write lock another process holds (an operator command on the same file) before 503 `database_busy`; also how long a login waits for its turn and its locks (PostgreSQL: `lock_timeout`) before 503 `temporarily_unavailable` ([the API reference](api.md#behaviour-the-spec-leaves-open), failed logins); 0 to 600000',
  }),
  databasePoolSize: setting({
    variable: 'DATABASE_POOL_SIZE',
    default: '10',
    parse: integer(1, 1000),
    meaning:
      "PostgreSQL: connections of one API process's pool at most (1 to 1000); several processes together must stay under the server's `max_connections`",
  }),
  mqttPort: setting({
    variable: 'MQTT_PORT',
    default: '1883',
    parse: integer(0, 65535),
    meaning: 'port of the embedded MQTT broker, on `HOST` (also in provisioning files)',
  }),
  mqttUrl: setting({
    variable: 'MQTT_URL',
    default: '',
    parse: optionalUrl(['mqtt:', 'mqtts:', 'ws:', 'wss:']),
    meaning:
      'an external broker: no embedded broker starts, the API subscribes to box responses there (also in provisioning files)',
  }),
  mqttUsername: setting({
    variable: 'MQTT_USERNAME',
    default: '',
    parse: optionalText,
    meaning: "the API's user name on an external broker",
  }),
  mqttPassword: setting({
    variable: 'MQTT_PASSWORD',
    default: '',
    parse: optionalText,
    meaning: "the API's password on an external broker",
  }),
  mqttTopicPrefix: setting({
    variable: 'MQTT_TOPIC_PREFIX',
    default: 'parkbench',
    parse: topicPrefix,
    meaning: 'first level of every MQTT topic',
  }),
  mqttSharedGroup: setting({
    variable: 'MQTT_SHARED_GROUP',
    default: 'parkbench-api',
    parse: sharedGroup,
    meaning:
      'on an external broker, responses are taken as the shared subscription `$share/<group>/...` so several API processes split them; empty for a broker without shared subscriptions',
  }),
  mqttClientId: setting({
    variable: 'MQTT_CLIENT_ID',
    default: '', // derived by the CLI (mqttConnectionOf), the same for a process restarted on one machine and port
    shownDefault: '`parkbench-api-<host name>-<PORT>`',
    parse: clientId,
    meaning:
      "the API's client id on an external broker: keep it when a process restarts, and give each process its own (the default does both for processes on distinct ports of one machine)",
  }),
  mqttSessionExpirySeconds: setting({
    variable: 'MQTT_SESSION_EXPIRY_SECONDS',
    default: '3600',
    // MQTT 5's Session Expiry Interval is four bytes; 0xFFFFFFFF would mean never.
    parse: integer(0, 4_294_967_294),
    meaning:
      "how long an external broker keeps the API's session while the process is away; the responses it routed to that process wait there and reach it when it comes back with the same client id ([why](#an-api-process-that-dies-with-an-external-broker)); 0: a clean session at every connection, and what was routed to a process that died is lost",
  }),
  mqttMaxPacketBytes: setting({
    variable: 'MQTT_MAX_PACKET_BYTES',
    default: '65536',
    // 268435455: the largest remaining length MQTT can express (256 MiB).
    parse: integer(4096, 268_435_455),
    meaning:
      'largest MQTT packet a logged-in client may send to the embedded broker (64 KiB; 4096 to 268435455); a CONNECT may have at most 4 KiB whatever this says. A larger packet closes the connection at its header (see [MQTT](#mqtt-broker-accounts-and-topics))',
  }),
  captureRingSeconds: setting({
    variable: 'CAPTURE_RING_SECONDS',
    default: '300',
    parse: integer(0, 86_400),
    meaning:
      "how long the API keeps each box's MQTT frames for `GET /api/operator/boxes/:module_id/capture` (a pcapng file, [docs/capture.md](capture.md)); 0 turns the capture ring off; 0 to 86400",
  }),
  captureRingMb: setting({
    variable: 'CAPTURE_RING_MB',
    default: '64',
    parse: integer(1, 65_536),
    meaning:
      'memory the capture ring may hold over all boxes, MiB: past it the oldest records go first, whatever their age (64 MiB keeps 300 s of about 440 boxes that answer once a second, or the last 26 s of 5,000 such boxes: [Benchmarks](benchmarks.md#the-capture-ring-perfcapture-ring))',
  }),
  boxAnswerTimeoutMs: setting({
    variable: 'BOX_ANSWER_TIMEOUT_MS',
    default: '5000',
    parse: integer(100, 600_000),
    meaning: 'how long `POST /api/car_driver/smart_keys/:id/open` waits for the box (then 504)',
  }),
  tokenTtlSeconds: setting({
    variable: 'TOKEN_TTL_SECONDS',
    default: '7200', // 2 hours, the spec's documented value
    parse: integer(1, 31_536_000),
    meaning: 'access token lifetime',
  }),
  refreshTokenTtlSeconds: setting({
    variable: 'REFRESH_TOKEN_TTL_SECONDS',
    default: '2592000',
    parse: integer(1, 31_536_000),
    meaning: 'refresh token lifetime (30 days)',
  }),
  tokenCacheSeconds: setting({
    variable: 'TOKEN_CACHE_SECONDS',
    default: '5',
    parse: integer(0, 3600),
    meaning:
      'bearer lookups cached in process (0: off); a token revoked through another process stays usable here this long',
  }),
  bodyLimitBytes: setting({
    variable: 'BODY_LIMIT_BYTES',
    default: '1048576',
    parse: integer(1024, 104_857_600),
    meaning: 'largest request body (1 MiB)',
  }),
  httpRequestTimeoutMs: setting({
    variable: 'HTTP_REQUEST_TIMEOUT_MS',
    default: '30000',
    parse: integer(100, 3_600_000),
    meaning:
      'a whole request (headers and body) must arrive within this, else 408 `request_timeout` and the connection closes',
  }),
  httpHeadersTimeoutMs: setting({
    variable: 'HTTP_HEADERS_TIMEOUT_MS',
    default: '10000',
    parse: integer(100, 3_600_000),
    meaning: 'the headers must arrive within this (408 as above); at most `HTTP_REQUEST_TIMEOUT_MS`',
  }),
  httpConnectionTimeoutMs: setting({
    variable: 'HTTP_CONNECTION_TIMEOUT_MS',
    default: '10000',
    parse: integer(100, 3_600_000),
    meaning:
      'a connection silent this long while a request is received or answered is closed; must exceed `BOX_ANSWER_TIMEOUT_MS` and `DATABASE_BUSY_TIMEOUT_MS`',
  }),
  httpKeepAliveTimeoutMs: setting({
    variable: 'HTTP_KEEP_ALIVE_TIMEOUT_MS',
    default: '72000',
    parse: integer(100, 3_600_000),
    meaning: "how long an idle kept-alive connection stays open (above a load balancer's usual 60 s)",
  }),
  logLevel: setting({
    variable: 'LOG_LEVEL',
    default: 'info',
    parse: logLevel,
    meaning:
      "pino level (`silent` to stop logs). No log line holds a secret sent in a URL: the value of a query parameter named `access_token`, `ticket`, `token`, `refresh_token`, `client_secret` or `password` (in any case, also percent-encoded) is printed `[redacted]` in request lines, in errors (their messages, and of a request that is not valid HTTP only its request line) and in the forwarding worker's URLs",
  }),
  loginMaxFailuresPerUsername: setting({
    variable: 'LOGIN_MAX_FAILURES_PER_USERNAME',
    default: '5',
    parse: integer(1, 1_000_000),
    meaning: 'failed logins per username in the window',
  }),
  loginMaxFailuresPerAddress: setting({
    variable: 'LOGIN_MAX_FAILURES_PER_ADDRESS',
    default: '20',
    parse: integer(1, 1_000_000),
    meaning: 'failed logins per client address in the window',
  }),
  loginFailureWindowSeconds: setting({
    variable: 'LOGIN_FAILURE_WINDOW_SECONDS',
    default: '900', // 15 minutes
    parse: integer(1, 86_400),
    meaning: 'sliding window of both limits',
  }),
  sessionCreateBurst: setting({
    variable: 'SESSION_CREATE_BURST',
    default: '20',
    parse: integer(1, 1_000_000),
    meaning:
      "parking sessions a driver may create at once (1 to 1000000): the size of each driver's token bucket, kept in the database and shared by every API process on it; past it `POST /api/car_driver/parking_sessions` answers 429 `too_many_sessions` with `Retry-After`",
  }),
  sessionCreateRatePerMinute: setting({
    variable: 'SESSION_CREATE_RATE_PER_MINUTE',
    default: '30',
    parse: integer(1, 60_000),
    meaning:
      "tokens back in a driver's bucket a minute (1 to 60000; one every 60000 / this ms, rounded up): after the burst, a driver creates one session every 2 s at most",
  }),
  scryptLog2N: setting({
    variable: 'SCRYPT_LOG2_N',
    default: '15', // N = 32768, r = 8, p = 1: 32 MiB and some tens of ms a hash
    parse: integer(10, 20),
    meaning: 'scrypt cost of new hashes (10..20)',
  }),
  trustProxy: setting({
    variable: 'TRUST_PROXY',
    default: 'false',
    parse: boolean,
    meaning: 'take the client address from `X-Forwarded-For` (behind a proxy)',
  }),
  exitKeyMinutes: setting({
    variable: 'EXIT_KEY_MINUTES',
    default: '30',
    parse: integer(1, 1440),
    meaning: 'lifetime of the exit key given at finalize past the window',
  }),
  paymentReturnSchemes: setting({
    variable: 'PAYMENT_RETURN_SCHEMES',
    default: 'parkbench-app',
    parse: schemeList,
    meaning: "app schemes (comma-separated) allowed in a payment page's `return_url`, besides http and https",
  }),
  boxLogsMaxBatch: setting({
    variable: 'BOX_LOGS_MAX_BATCH',
    default: '1000',
    parse: integer(1, 100_000),
    meaning: 'most box logs in one `POST /api/box_logs` (more: 422)',
  }),
  forwardingTimeoutMs: setting({
    variable: 'FORWARDING_TIMEOUT_MS',
    default: '15000',
    parse: integer(1000, 300_000),
    meaning:
      'longest a forwarding attempt may take, connection to status line (1000 to 300000); then it failed and is retried ([Forwarding](#forwarding))',
  }),
  forwardingAllowPrivate: setting({
    variable: 'FORWARDING_ALLOW_PRIVATE',
    default: 'false',
    shownDefault: '`false` (`true` under `parkbench start`)',
    parse: boolean,
    meaning:
      'forward to URLs whose host is or resolves to an address that is not public too (private, loopback, link-local, an IPv6 address carrying one, the special ranges: the rule is in [Forwarding](#forwarding)); checked at each delivery on the address connected to',
  }),
  controlPollMs: setting({
    variable: 'CONTROL_POLL_MS',
    default: '1000',
    parse: integer(10, 600_000),
    meaning:
      'how often the API reads its queue of control commands (REVOKE, SET_ISSUER; see [Control commands](#control-commands-revoke-set-access-rotate-issuer)): commands an admin command queued in another process go out within this (10 to 600000)',
  }),
  controlRetryMaxMs: setting({
    variable: 'CONTROL_RETRY_MAX_MS',
    default: '300000',
    parse: integer(1000, 86_400_000),
    meaning:
      'longest wait between two sends of a control command its box does not answer (the backoff starts at 1 s and doubles; a box seen online again gets it at once)',
  }),
  conformanceHoldMs: setting({
    variable: 'CONFORMANCE_HOLD_MS',
    default: '60000',
    parse: integer(1000, 3_600_000),
    meaning:
      "the lease of a conformance run's hold on its box, renewed every third of it while the run lasts (1000 to 3600000): no control command goes to a held box; when an API process dies mid-run, its box is free again (and the run's queued put-back of the issuer keys goes out) once the lease has passed ([Control commands](#control-commands-revoke-set-access-rotate-issuer))",
  }),
  runsKeptPerBox: setting({
    variable: 'RUNS_KEPT_PER_BOX',
    default: '200',
    parse: integer(1, 1_000_000),
    meaning:
      'the newest runs (conformance and soak, [Runs](api.md#runs)) kept per box; older ones are deleted when a run of the box ends and at start-up, a running one never (1 to 1000000)',
  }),
  runsKeptDays: setting({
    variable: 'RUNS_KEPT_DAYS',
    default: '90',
    parse: integer(0, 36_500),
    meaning:
      'runs that started longer ago than this many days are deleted as above; 0 keeps runs of any age (0 to 36500)',
  }),
  reservationPollMs: setting({
    variable: 'RESERVATION_POLL_MS',
    default: '500',
    parse: integer(50, 60_000),
    meaning:
      "how often a request waiting for a reserved box ([Reservations](api.md#reservations)) reads the database, to see a release or an expiry by another API process; this process's own are seen at once (50 to 60000)",
  }),
  eventsReplaySeconds: setting({
    variable: 'EVENTS_REPLAY_SECONDS',
    default: '300',
    parse: integer(0, 86_400),
    meaning:
      'how long the operator event stream (`GET /api/operator/events`) keeps events for a client that reconnects with `Last-Event-ID`; older ids get a fresh snapshot (0 to 86400)',
  }),
  eventsReplayMax: setting({
    variable: 'EVENTS_REPLAY_MAX',
    default: '100000',
    parse: integer(1, 10_000_000),
    meaning:
      'at most this many events kept for a resume, whatever the window: the memory bound under load (20,000 logs/s fill it in 5 s; a box-log event keeps about 390 B) (1 to 10000000)',
  }),
  eventsFlushMs: setting({
    variable: 'EVENTS_FLUSH_MS',
    default: '250',
    parse: integer(10, 60_000),
    meaning:
      'each event-stream client gets at most one message per event name this often (coalesced per box, session and parking) (10 to 60000)',
  }),
});

type Settings = typeof SETTINGS;

/** The configuration as loadConfig returns it: each setting's parsed value. */
export type ApiConfig = {
  readonly [K in keyof Settings]: Settings[K] extends Setting<infer T> ? T : never;
};

/** An environment variable of the table, e.g. `PORT`. */
export type ConfigVariable = Settings[keyof Settings]['variable'];

/** Every setting, in the table's order. */
export const SETTING_LIST: readonly Setting<unknown, ConfigVariable>[] = Object.freeze(Object.values(SETTINGS));

export const CONFIG_VARIABLES: readonly ConfigVariable[] = Object.freeze(SETTING_LIST.map((entry) => entry.variable));

/** Defaults, as the strings an operator would write (units in the names). */
export const DEFAULTS: Readonly<Record<ConfigVariable, string>> = Object.freeze(
  Object.fromEntries(SETTING_LIST.map((entry) => [entry.variable, entry.default])) as Record<ConfigVariable, string>,
);

/** The flag of a variable: `DATABASE_PATH` -> `database-path`. */
export function flagName(variable: string): string {
  return variable.toLowerCase().replaceAll('_', '-');
}
