// Reading the settings of the table: from flags, the environment, a command's
// own defaults and the table's defaults (in that order), each parsed by its
// setting's parser, then checked against each other, and frozen. Nothing
// reads process.env elsewhere: the result is passed in explicitly.
import { resolve } from 'node:path';
import { ConfigError } from './parsers.js';
import { flagName, SETTINGS, DEFAULTS, type ApiConfig, type ConfigVariable } from './settings.js';

type Flags = Readonly<Partial<Record<ConfigVariable, string | undefined>>>;

/**
 * Builds the configuration from the environment and flags (keyed by variable
 * name, e.g. `{ PORT: '8080' }`; flags win). `commandDefaults` stand below
 * the environment: a command's own defaults (`parkbench start`'s SQLite file
 * under its --data-dir). Throws ConfigError with one line naming the variable
 * on the first bad value.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: Flags = {},
  commandDefaults: Readonly<Partial<Record<ConfigVariable, string>>> = {},
): ApiConfig {
  const raw = (variable: ConfigVariable): string =>
    flags[variable] ?? databaseVariable(variable, env, flags) ?? commandDefaults[variable] ?? DEFAULTS[variable];
  const source = (variable: ConfigVariable): string =>
    flags[variable] !== undefined ? `--${flagName(variable)}` : variable;
  const values: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS)) {
    if (setting === SETTINGS.publicUrl) continue; // derived below, once host and port are known
    values[key] = setting.parse(raw(setting.variable), source(setting.variable));
  }
  const publicRaw = raw('PUBLIC_URL');
  values.publicUrl =
    publicRaw.trim() === ''
      ? `http://${hostForUrl(values.host as string)}:${values.port as number}`
      : SETTINGS.publicUrl.parse(publicRaw, source('PUBLIC_URL'));
  const config = values as ApiConfig;
  checkHttpTimeouts(config, source);
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
  flags: Flags,
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
