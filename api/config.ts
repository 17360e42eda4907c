// The API's configuration: one table of settings with their defaults (units in
// the names and comments), read from the environment and from flags of the
// same meaning (flags win), validated once at start and frozen. Nothing reads
// process.env elsewhere: the result is passed in explicitly.
import { resolve } from 'node:path';

export interface ApiConfig {
  /** Address the API (and later the embedded broker) listens on. */
  readonly host: string;
  /** HTTP port; 0 picks a free one. */
  readonly port: number;
  /** Base of links given to phones (pay_url, part 2). */
  readonly publicUrl: string;
  /** The SQLite file; its folder is created. Unused when databaseUrl is set. */
  readonly databasePath: string;
  /** A PostgreSQL server instead of the SQLite file (databaseFrom: which one wins). */
  readonly databaseUrl: PostgresUrl | undefined;
  /** Embedded broker port, used in provisioning files. */
  readonly mqttPort: number;
  /** An external broker; when set, provisioning files point at it and no
   * embedded broker starts. */
  readonly mqttUrl: string | undefined;
  /** The API's own account on an external broker. */
  readonly mqttUsername: string | undefined;
  readonly mqttPassword: string | undefined;
  /** First topic level of every MQTT topic. */
  readonly mqttTopicPrefix: string;
  /** Shared subscription group for responses on an external broker, so
   * several API processes split them; empty: a plain subscription. */
  readonly mqttSharedGroup: string;
  /** The API's client id on an external broker; unset: parkbench-api-<host name>-<PORT>,
   * the same for a process restarted on the same machine and port. */
  readonly mqttClientId: string | undefined;
  /** How long an external broker keeps this process's session (and the
   * responses routed to it) while it is away, seconds; 0: a clean session
   * at every connection. */
  readonly mqttSessionExpirySeconds: number;
  /** Largest MQTT packet a logged-in client may send to the embedded broker,
   * bytes (a CONNECT: at most 4 KiB whatever this says); larger ones close
   * the connection at their fixed header. */
  readonly mqttMaxPacketBytes: number;
  /** How long POST /api/car_driver/smart_keys/:id/open waits for the box, ms. */
  readonly boxAnswerTimeoutMs: number;
  /** Access token lifetime, seconds. */
  readonly tokenTtlSeconds: number;
  /** Refresh token lifetime, seconds. */
  readonly refreshTokenTtlSeconds: number;
  /** How long a bearer lookup is cached in process, seconds; 0 disables. A
   * token revoked through another process stays usable here this long. */
  readonly tokenCacheSeconds: number;
  /** How long a write waits for a write lock another process holds, then 503 database_busy. */
  readonly databaseBusyTimeoutMs: number;
  /** PostgreSQL: connections of this process's pool at most. */
  readonly databasePoolSize: number;
  /** Largest request body accepted, bytes; larger ones get 413. */
  readonly bodyLimitBytes: number;
  /** Longest a client may take to send a whole request (headers and body),
   * ms; then 408 request_timeout and the connection closes. */
  readonly httpRequestTimeoutMs: number;
  /** Longest a client may take to send the headers, ms (at most the request timeout). */
  readonly httpHeadersTimeoutMs: number;
  /** Longest a connection may stay silent while a request is being received or
   * answered, ms; then it is closed. Above BOX_ANSWER_TIMEOUT_MS and
   * DATABASE_BUSY_TIMEOUT_MS, so that no answer in the making is cut. */
  readonly httpConnectionTimeoutMs: number;
  /** How long an idle kept-alive connection stays open between requests, ms. */
  readonly httpKeepAliveTimeoutMs: number;
  /** pino level. */
  readonly logLevel: string;
  /** Failed logins allowed per username within the window before 429. */
  readonly loginMaxFailuresPerUsername: number;
  /** Failed logins allowed per client address within the window before 429. */
  readonly loginMaxFailuresPerAddress: number;
  /** Sliding window of the failed-login limits, seconds. */
  readonly loginFailureWindowSeconds: number;
  /** Parking sessions a driver may create at once: the size of its token bucket. */
  readonly sessionCreateBurst: number;
  /** Tokens back in a driver's bucket per minute (one every 60,000 / this ms, rounded up). */
  readonly sessionCreateRatePerMinute: number;
  /** scrypt cost for new password and secret hashes: N = 2^this. */
  readonly scryptLog2N: number;
  /** Trust X-Forwarded-For (behind a reverse proxy) for the client address. */
  readonly trustProxy: boolean;
  /** Lifetime of the exit key a driver gets after overstaying, minutes. */
  readonly exitKeyMinutes: number;
  /** URL schemes besides http and https allowed as a payment page's return_url. */
  readonly paymentReturnSchemes: readonly string[];
  /** Most box logs accepted in one POST /api/box_logs. */
  readonly boxLogsMaxBatch: number;
  /** Longest a forwarding attempt may take, connection to status line, ms. */
  readonly forwardingTimeoutMs: number;
  /** Forward to URLs resolving to private, loopback or link-local addresses
   * too (a bench's receiver on localhost); checked at delivery time. */
  readonly forwardingAllowPrivate: boolean;
  /** How often the control-command dispatcher reads its queue, ms (rows
   * written by admin commands in other processes are seen within this). */
  readonly controlPollMs: number;
  /** How long the event stream keeps events for a client that reconnects
   * with Last-Event-ID, seconds; older ones get a snapshot. */
  readonly eventsReplaySeconds: number;
  /** At most this many events kept for a resume (memory bound under load). */
  readonly eventsReplayMax: number;
  /** Each event-stream client gets at most one message per event name this often, ms. */
  readonly eventsFlushMs: number;
  /** Longest wait between two sends of a control command a box does not
   * answer, ms (the backoff starts at 1 s and doubles up to this). */
  readonly controlRetryMaxMs: number;
  /** The lease of a conformance run's hold on its box, ms: renewed every
   * third of it while the run lasts; a process that dies frees the box
   * (and its queued put-back) once it has passed. */
  readonly conformanceHoldMs: number;
}

/** A DATABASE_URL, its parts as pg's client takes them. */
export interface PostgresUrl {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string | undefined;
  readonly password: string | undefined;
  /** `?sslmode=`: disable (the default), require (encrypted, any
   * certificate) or verify-full (encrypted, the certificate checked against
   * the system's CAs and the host name). */
  readonly ssl: 'disable' | 'require' | 'verify-full';
  /** The URL with its password masked, for logs and messages. */
  readonly shown: string;
}

/** Bad configuration: the CLI prints the message as one line and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string, name: string) => T;

interface Setting<K extends keyof ApiConfig> {
  key: K;
  /** Environment variable; the flag is its kebab-case lowercase form. */
  env: string;
  parse: Parser<ApiConfig[K]>;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(min: number, max: number): Parser<number> {
  return (raw, name) => {
    if (!/^\d+$/.test(raw.trim()))
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    const value = Number(raw.trim());
    if (value < min || value > max)
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return value;
  };
}

const text: Parser<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
};

const optionalText: Parser<string | undefined> = (raw) => (raw.trim() === '' ? undefined : raw.trim());

const boolean: Parser<boolean> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(value)) return true;
  if (['0', 'false', 'no'].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};

function url(protocols: string[]): Parser<string> {
  return (raw, name) => {
    let parsed: URL;
    try {
      parsed = new URL(raw.trim());
    } catch {
      throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${raw}"`);
    }
    return raw.trim().replace(/\/+$/, '');
  };
}

const SSL_MODES = ['disable', 'require', 'verify-full'] as const;

/** postgres://user:password@host:port/database?sslmode=...; the message of a
 * bad one shows the URL with its password masked. */
const postgresUrl: Parser<PostgresUrl | undefined> = (raw, name) => {
  const value = raw.trim();
  if (value === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(
      `${name} must be a URL such as postgres://user:password@host:5432/parkbench, got "${masked(value)}"`,
    );
  }
  const shown = masked(value);
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new ConfigError(`${name} must use postgres: or postgresql:, got "${shown}"`);
  if (parsed.hostname === '') throw new ConfigError(`${name} must name a host, got "${shown}"`);
  const database = decodePart(parsed.pathname.replace(/^\//, ''), name, shown);
  if (database === '' || database.includes('/'))
    throw new ConfigError(`${name} must name one database after the host (…/parkbench), got "${shown}"`);
  const parameters = [...parsed.searchParams.keys()].filter((key) => key !== 'sslmode');
  if (parameters.length > 0)
    throw new ConfigError(`${name} takes no parameter but sslmode, got ${parameters.join(', ')} in "${shown}"`);
  const ssl = parsed.searchParams.get('sslmode') ?? 'disable';
  if (!(SSL_MODES as readonly string[]).includes(ssl))
    throw new ConfigError(`${name}: sslmode must be one of ${SSL_MODES.join(', ')}, got "${ssl}"`);
  return Object.freeze({
    // URL keeps IPv6 hosts in brackets; pg wants the bare address.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 5432 : Number(parsed.port),
    database,
    user: parsed.username === '' ? undefined : decodePart(parsed.username, name, shown),
    password: parsed.password === '' ? undefined : decodePart(parsed.password, name, shown),
    ssl: ssl as PostgresUrl['ssl'],
    shown,
  });
};

/** A DATABASE_URL as loadConfig reads it (tests and tools that hold a URL). */
export function parsePostgresUrl(raw: string, name = 'DATABASE_URL'): PostgresUrl {
  const parsed = postgresUrl(raw, name);
  if (parsed === undefined) throw new ConfigError(`${name} must not be empty`);
  return parsed;
}

/** The URL with the password between "user:" and "@" replaced, whether or not it parses. */
function masked(value: string): string {
  return value.replace(/:[^:@/]*@/, ':***@');
}

function decodePart(part: string, name: string, shown: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ConfigError(`${name} has a badly percent-encoded part in "${shown}"`);
  }
}

/** "parkbench-app, other-app" -> ['parkbench-app', 'other-app']; schemes a
 * browser runs or reads locally are refused whatever the operator writes. */
const schemeList: Parser<readonly string[]> = (raw, name) => {
  const schemes = raw
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  for (const scheme of schemes) {
    if (!/^[a-z][a-z0-9+.-]*$/.test(scheme))
      throw new ConfigError(`${name} must be comma-separated URL schemes such as parkbench-app, got "${raw}"`);
    if (['javascript', 'data', 'vbscript', 'file', 'blob', 'about', 'filesystem'].includes(scheme))
      throw new ConfigError(`${name} must not allow the ${scheme} scheme`);
  }
  return Object.freeze(schemes);
};

/** A topic level and more, without wildcards (docs/architecture.md, MQTT topics). */
const topicPrefix: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (value === '' || /[#+\s]/.test(value) || value.startsWith('/') || value.endsWith('/') || value.startsWith('$')) {
    throw new ConfigError(
      `${name} must be topic levels without wildcards, spaces or leading/trailing slashes, such as parkbench, got "${raw}"`,
    );
  }
  return value;
};

const sharedGroup: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (value !== '' && !/^[A-Za-z0-9._-]{1,64}$/.test(value))
    throw new ConfigError(
      `${name} must be empty or 1 to 64 letters, digits, dots, dashes or underscores, got "${raw}"`,
    );
  return value;
};

const clientId: Parser<string | undefined> = (raw, name) => {
  const value = raw.trim();
  if (value === '') return undefined;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(value))
    throw new ConfigError(
      `${name} must be empty or 1 to 128 letters, digits, dots, dashes or underscores, got "${raw}"`,
    );
  return value;
};

const logLevel: Parser<string> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (!LOG_LEVELS.includes(value))
    throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return value;
};

/** Defaults, as the strings an operator would write (units in the names). */
export const DEFAULTS = Object.freeze({
  HOST: '127.0.0.1',
  PORT: '3000',
  PUBLIC_URL: '', // derived: http://HOST:PORT
  DATABASE_PATH: './data/parkbench.sqlite',
  DATABASE_URL: '', // postgres://user:password@host:5432/db: PostgreSQL instead of the SQLite file
  DATABASE_BUSY_TIMEOUT_MS: '5000', // a write waits this long for another process's lock, then 503
  DATABASE_POOL_SIZE: '10', // PostgreSQL connections per API process at most
  MQTT_PORT: '1883',
  MQTT_URL: '',
  MQTT_USERNAME: '',
  MQTT_PASSWORD: '',
  MQTT_TOPIC_PREFIX: 'parkbench',
  MQTT_SHARED_GROUP: 'parkbench-api', // empty: no shared subscription
  MQTT_CLIENT_ID: '', // derived: parkbench-api-<host name>-<PORT>
  MQTT_SESSION_EXPIRY_SECONDS: '3600', // an hour for a killed process to come back for its responses
  MQTT_MAX_PACKET_BYTES: '65536', // 64 KiB; the embedded broker closes a connection sending more
  BOX_ANSWER_TIMEOUT_MS: '5000', // an online key's open waits this long for the box
  TOKEN_TTL_SECONDS: '7200', // 2 hours, the spec's documented value
  REFRESH_TOKEN_TTL_SECONDS: '2592000', // 30 days
  TOKEN_CACHE_SECONDS: '5', // bearer lookups cached in process; 0 disables
  BODY_LIMIT_BYTES: '1048576', // 1 MiB
  HTTP_REQUEST_TIMEOUT_MS: '30000', // a whole request (headers and body) must arrive within this
  HTTP_HEADERS_TIMEOUT_MS: '10000', // the headers must arrive within this
  HTTP_CONNECTION_TIMEOUT_MS: '10000', // a connection silent this long mid-request is closed
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '72000', // idle kept-alive connections (above a load balancer's 60 s)
  LOG_LEVEL: 'info',
  LOGIN_MAX_FAILURES_PER_USERNAME: '5',
  LOGIN_MAX_FAILURES_PER_ADDRESS: '20',
  LOGIN_FAILURE_WINDOW_SECONDS: '900', // 15 minutes
  SESSION_CREATE_BURST: '20', // sessions a driver may create at once, then 429
  SESSION_CREATE_RATE_PER_MINUTE: '30', // one more every 2 s
  SCRYPT_LOG2_N: '15', // N = 32768, r = 8, p = 1: 32 MiB and some tens of ms a hash
  TRUST_PROXY: 'false',
  EXIT_KEY_MINUTES: '30', // exit key after an overstay
  PAYMENT_RETURN_SCHEMES: 'parkbench-app', // comma-separated app schemes for return_url
  BOX_LOGS_MAX_BATCH: '1000', // box logs per request
  FORWARDING_TIMEOUT_MS: '15000', // one forwarding attempt, then it failed
  FORWARDING_ALLOW_PRIVATE: 'false', // true under `parkbench start` (a bench forwards to localhost)
  CONTROL_POLL_MS: '1000', // the control-command queue is read this often
  CONTROL_RETRY_MAX_MS: '300000', // 5 minutes: longest backoff of an unanswered control command
  CONFORMANCE_HOLD_MS: '60000', // a conformance run's hold on its box, renewed every 20 s
  EVENTS_REPLAY_SECONDS: '300', // 5 minutes of events kept for a resume (Last-Event-ID)
  EVENTS_REPLAY_MAX: '100000', // events kept at most (20,000 logs/s fills it in 5 s; then a snapshot)
  EVENTS_FLUSH_MS: '250', // one message per event name per client at most this often
});

export type ConfigVariable = keyof typeof DEFAULTS;

const SETTINGS: { [K in keyof ApiConfig]: Setting<K> } = {
  host: { key: 'host', env: 'HOST', parse: text },
  port: { key: 'port', env: 'PORT', parse: integer(0, 65535) },
  publicUrl: { key: 'publicUrl', env: 'PUBLIC_URL', parse: url(['http:', 'https:']) },
  databasePath: { key: 'databasePath', env: 'DATABASE_PATH', parse: text },
  databaseUrl: { key: 'databaseUrl', env: 'DATABASE_URL', parse: postgresUrl },
  databaseBusyTimeoutMs: { key: 'databaseBusyTimeoutMs', env: 'DATABASE_BUSY_TIMEOUT_MS', parse: integer(0, 600_000) },
  databasePoolSize: { key: 'databasePoolSize', env: 'DATABASE_POOL_SIZE', parse: integer(1, 1000) },
  mqttPort: { key: 'mqttPort', env: 'MQTT_PORT', parse: integer(0, 65535) },
  mqttUrl: {
    key: 'mqttUrl',
    env: 'MQTT_URL',
    parse: (raw, name) =>
      raw.trim() === '' ? optionalText(raw, name) : url(['mqtt:', 'mqtts:', 'ws:', 'wss:'])(raw, name),
  },
  mqttUsername: { key: 'mqttUsername', env: 'MQTT_USERNAME', parse: optionalText },
  mqttPassword: { key: 'mqttPassword', env: 'MQTT_PASSWORD', parse: optionalText },
  mqttTopicPrefix: { key: 'mqttTopicPrefix', env: 'MQTT_TOPIC_PREFIX', parse: topicPrefix },
  mqttSharedGroup: { key: 'mqttSharedGroup', env: 'MQTT_SHARED_GROUP', parse: sharedGroup },
  mqttClientId: { key: 'mqttClientId', env: 'MQTT_CLIENT_ID', parse: clientId },
  mqttSessionExpirySeconds: {
    key: 'mqttSessionExpirySeconds',
    env: 'MQTT_SESSION_EXPIRY_SECONDS',
    // MQTT 5's Session Expiry Interval is four bytes; 0xFFFFFFFF would mean never.
    parse: integer(0, 4_294_967_294),
  },
  // 268435455: the largest remaining length MQTT can express (256 MiB).
  mqttMaxPacketBytes: { key: 'mqttMaxPacketBytes', env: 'MQTT_MAX_PACKET_BYTES', parse: integer(4096, 268_435_455) },
  boxAnswerTimeoutMs: { key: 'boxAnswerTimeoutMs', env: 'BOX_ANSWER_TIMEOUT_MS', parse: integer(100, 600_000) },
  tokenTtlSeconds: { key: 'tokenTtlSeconds', env: 'TOKEN_TTL_SECONDS', parse: integer(1, 31_536_000) },
  refreshTokenTtlSeconds: {
    key: 'refreshTokenTtlSeconds',
    env: 'REFRESH_TOKEN_TTL_SECONDS',
    parse: integer(1, 31_536_000),
  },
  tokenCacheSeconds: { key: 'tokenCacheSeconds', env: 'TOKEN_CACHE_SECONDS', parse: integer(0, 3600) },
  bodyLimitBytes: { key: 'bodyLimitBytes', env: 'BODY_LIMIT_BYTES', parse: integer(1024, 104_857_600) },
  httpRequestTimeoutMs: { key: 'httpRequestTimeoutMs', env: 'HTTP_REQUEST_TIMEOUT_MS', parse: integer(100, 3_600_000) },
  httpHeadersTimeoutMs: { key: 'httpHeadersTimeoutMs', env: 'HTTP_HEADERS_TIMEOUT_MS', parse: integer(100, 3_600_000) },
  httpConnectionTimeoutMs: {
    key: 'httpConnectionTimeoutMs',
    env: 'HTTP_CONNECTION_TIMEOUT_MS',
    parse: integer(100, 3_600_000),
  },
  httpKeepAliveTimeoutMs: {
    key: 'httpKeepAliveTimeoutMs',
    env: 'HTTP_KEEP_ALIVE_TIMEOUT_MS',
    parse: integer(100, 3_600_000),
  },
  logLevel: { key: 'logLevel', env: 'LOG_LEVEL', parse: logLevel },
  loginMaxFailuresPerUsername: {
    key: 'loginMaxFailuresPerUsername',
    env: 'LOGIN_MAX_FAILURES_PER_USERNAME',
    parse: integer(1, 1_000_000),
  },
  loginMaxFailuresPerAddress: {
    key: 'loginMaxFailuresPerAddress',
    env: 'LOGIN_MAX_FAILURES_PER_ADDRESS',
    parse: integer(1, 1_000_000),
  },
  loginFailureWindowSeconds: {
    key: 'loginFailureWindowSeconds',
    env: 'LOGIN_FAILURE_WINDOW_SECONDS',
    parse: integer(1, 86_400),
  },
  sessionCreateBurst: { key: 'sessionCreateBurst', env: 'SESSION_CREATE_BURST', parse: integer(1, 1_000_000) },
  sessionCreateRatePerMinute: {
    key: 'sessionCreateRatePerMinute',
    env: 'SESSION_CREATE_RATE_PER_MINUTE',
    parse: integer(1, 60_000),
  },
  scryptLog2N: { key: 'scryptLog2N', env: 'SCRYPT_LOG2_N', parse: integer(10, 20) },
  trustProxy: { key: 'trustProxy', env: 'TRUST_PROXY', parse: boolean },
  exitKeyMinutes: { key: 'exitKeyMinutes', env: 'EXIT_KEY_MINUTES', parse: integer(1, 1440) },
  paymentReturnSchemes: { key: 'paymentReturnSchemes', env: 'PAYMENT_RETURN_SCHEMES', parse: schemeList },
  boxLogsMaxBatch: { key: 'boxLogsMaxBatch', env: 'BOX_LOGS_MAX_BATCH', parse: integer(1, 100_000) },
  forwardingTimeoutMs: { key: 'forwardingTimeoutMs', env: 'FORWARDING_TIMEOUT_MS', parse: integer(1000, 300_000) },
  forwardingAllowPrivate: { key: 'forwardingAllowPrivate', env: 'FORWARDING_ALLOW_PRIVATE', parse: boolean },
  controlPollMs: { key: 'controlPollMs', env: 'CONTROL_POLL_MS', parse: integer(10, 600_000) },
  controlRetryMaxMs: { key: 'controlRetryMaxMs', env: 'CONTROL_RETRY_MAX_MS', parse: integer(1000, 86_400_000) },
  conformanceHoldMs: { key: 'conformanceHoldMs', env: 'CONFORMANCE_HOLD_MS', parse: integer(1000, 3_600_000) },
  eventsReplaySeconds: { key: 'eventsReplaySeconds', env: 'EVENTS_REPLAY_SECONDS', parse: integer(0, 86_400) },
  eventsReplayMax: { key: 'eventsReplayMax', env: 'EVENTS_REPLAY_MAX', parse: integer(1, 10_000_000) },
  eventsFlushMs: { key: 'eventsFlushMs', env: 'EVENTS_FLUSH_MS', parse: integer(10, 60_000) },
};

/** The flag of a variable: `DATABASE_PATH` -> `database-path`. */
export function flagName(variable: string): string {
  return variable.toLowerCase().replaceAll('_', '-');
}

export const CONFIG_VARIABLES = Object.keys(DEFAULTS) as ConfigVariable[];

/**
 * Builds the configuration from the environment and flags (keyed by variable
 * name, e.g. `{ PORT: '8080' }`; flags win). `commandDefaults` stand below
 * the environment: a command's own defaults (`parkbench start`'s SQLite file
 * under its --data-dir). Throws ConfigError with one line naming the variable
 * on the first bad value.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: Readonly<Partial<Record<ConfigVariable, string | undefined>>> = {},
  commandDefaults: Readonly<Partial<Record<ConfigVariable, string>>> = {},
): ApiConfig {
  const raw = (variable: ConfigVariable): string =>
    flags[variable] ?? databaseVariable(variable, env, flags) ?? commandDefaults[variable] ?? DEFAULTS[variable];
  const values: Record<string, unknown> = {};
  for (const setting of Object.values(SETTINGS) as Setting<keyof ApiConfig>[]) {
    const variable = setting.env as ConfigVariable;
    if (setting.key === 'publicUrl') continue; // derived below, once host and port are known
    const source = flags[variable] !== undefined ? `--${flagName(variable)}` : variable;
    values[setting.key] = setting.parse(raw(variable), source);
  }
  const publicRaw = raw('PUBLIC_URL');
  values.publicUrl =
    publicRaw.trim() === ''
      ? `http://${hostForUrl(values.host as string)}:${values.port as number}`
      : SETTINGS.publicUrl.parse(publicRaw, flags.PUBLIC_URL !== undefined ? '--public-url' : 'PUBLIC_URL');
  const config = values as unknown as ApiConfig;
  checkHttpTimeouts(config, (variable) => (flags[variable] !== undefined ? `--${flagName(variable)}` : variable));
  return Object.freeze(config);
}

/**
 * The environment's value of a variable, where the database rule allows it.
 * One rule for every command that opens the database (api, start, admin):
 * a database flag (`--database`, `--database-url`, `--database-path`), then
 * DATABASE_URL, then DATABASE_PATH, then the command's default file. A URL
 * set wins over a path (api/db/open-store.ts opens PostgreSQL when
 * databaseUrl is set), so a file given as a flag clears the environment's
 * DATABASE_URL: the flag wins.
 */
function databaseVariable(
  variable: ConfigVariable,
  env: Readonly<Record<string, string | undefined>>,
  flags: Readonly<Partial<Record<ConfigVariable, string | undefined>>>,
): string | undefined {
  if (variable === 'DATABASE_URL' && flags.DATABASE_PATH !== undefined) return '';
  return env[variable];
}

/** `--database`: a postgres:// URL is DATABASE_URL's flag, anything else
 * DATABASE_PATH's (the SQLite file). */
export function databaseFlag(value: string): { DATABASE_URL: string } | { DATABASE_PATH: string } {
  return /^postgres(ql)?:\/\//i.test(value.trim()) ? { DATABASE_URL: value } : { DATABASE_PATH: value };
}

/** The database in use, as the ready line and GET /health name it: the
 * SQLite file's absolute path, or the PostgreSQL URL with its password masked. */
export function databaseShown(config: Pick<ApiConfig, 'databasePath' | 'databaseUrl'>): string {
  return config.databaseUrl?.shown ?? resolve(config.databasePath);
}

/** The HTTP timeouts against each other and against the waits a request may
 * legitimately make (node refuses headers timeout > request timeout; a silent
 * connection closed while the box or the database is awaited loses the answer). */
function checkHttpTimeouts(config: ApiConfig, source: (variable: ConfigVariable) => string): void {
  if (config.httpHeadersTimeoutMs > config.httpRequestTimeoutMs) {
    throw new ConfigError(
      `${source('HTTP_HEADERS_TIMEOUT_MS')} (${config.httpHeadersTimeoutMs}) must not exceed ${source('HTTP_REQUEST_TIMEOUT_MS')} (${config.httpRequestTimeoutMs})`,
    );
  }
  for (const [variable, waitMs] of [
    ['BOX_ANSWER_TIMEOUT_MS', config.boxAnswerTimeoutMs],
    ['DATABASE_BUSY_TIMEOUT_MS', config.databaseBusyTimeoutMs],
  ] as const) {
    if (config.httpConnectionTimeoutMs <= waitMs) {
      throw new ConfigError(
        `${source('HTTP_CONNECTION_TIMEOUT_MS')} (${config.httpConnectionTimeoutMs}) must be greater than ${source(variable)} (${waitMs}), or answers still in the making are cut`,
      );
    }
  }
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** A configuration for tests and benches: defaults plus overrides, unvalidated. */
export function configWith(overrides: Partial<ApiConfig>): ApiConfig {
  return Object.freeze({ ...loadConfig({}), ...overrides });
}
