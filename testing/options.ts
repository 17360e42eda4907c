// The options of startBench, each checked before anything starts: a bad one
// rejects with a BenchOptionError naming it.
import { resolve } from 'node:path';
import { ConfigError, parsePostgresUrl } from '../api/config/index.js';
import { logLevel as parseLogLevel } from '../api/config/parsers.js';
import { messageOf } from '../lib/message-of.js';

export interface BenchOptions {
  /** The API's HTTP port on 127.0.0.1; default: a free one. */
  readonly port?: number;
  /** The embedded MQTT broker's port on 127.0.0.1; default: a free one. */
  readonly mqttPort?: number;
  /** The data folder: the SQLite file (unless `databaseUrl`) and the boxes'
   * state, kept after `stop()` and taken up again by the next bench on it.
   * Default: a fresh temporary folder, removed by `stop()`. */
  readonly dataDir?: string;
  /** How many times faster than real time the simulated boxes run (barrier
   * movements, their clocks), above 0 and at most 10000; default 1. */
  readonly speed?: number;
  /** The demo parking's access mode: `signed` (ACCESS_SIGNED under its issuer
   * key, the default) or `sealed` (ACCESS under its parking key, for version
   * 1 firmware). On a database whose demo parking has the other one, the
   * bench does not start. */
  readonly accessMode?: 'signed' | 'sealed';
  /** A PostgreSQL database instead of the SQLite file
   * (`postgres://user:password@host:5432/database`); the bench makes its demo
   * data there, or takes up the demo data it holds. */
  readonly databaseUrl?: string;
  /** The API's and the boxes' logs on stderr from this level: fatal, error,
   * warn, info, debug, trace; default `silent`. */
  readonly logLevel?: string;
}

/** An option startBench cannot take, or that kept the bench from starting
 * (a port in use, a database it cannot reach); its message names it. */
export class BenchOptionError extends Error {
  override readonly name = 'BenchOptionError';

  constructor(
    /** The option at fault, as BenchOptions names it. */
    readonly option: string,
    /** What is wrong, naming the option: `port must be …`, `databaseUrl: …`. */
    message: string,
    options?: ErrorOptions,
  ) {
    super(`startBench: ${message}`, options);
  }
}

/** The options with their defaults; `port` undefined: a free port. */
export interface CheckedOptions {
  readonly port: number | undefined;
  readonly mqttPort: number;
  readonly dataDir: string | undefined;
  readonly speed: number;
  readonly accessMode: 'signed' | 'sealed' | undefined;
  readonly databaseUrl: string | undefined;
  readonly logLevel: string;
}

const OPTION_NAMES = ['port', 'mqttPort', 'dataDir', 'speed', 'accessMode', 'databaseUrl', 'logLevel'] as const;
type OptionName = (typeof OPTION_NAMES)[number];
const ACCESS_MODES = ['signed', 'sealed'] as const;

/** Checks what a caller passed, typed or not (a test in plain JavaScript). */
export function checkOptions(options: unknown): CheckedOptions {
  const given = options ?? {};
  if (typeof given !== 'object' || Array.isArray(given))
    throw new TypeError(`startBench: its options must be an object, got ${describe(given)}`);
  for (const name of Object.keys(given)) {
    if (!(OPTION_NAMES as readonly string[]).includes(name))
      throw new BenchOptionError(name, `${name} is no option (they are ${OPTION_NAMES.join(', ')})`);
  }
  const option = <T>(name: OptionName, check: (value: unknown) => T): T | undefined =>
    checked(given as Record<string, unknown>, name, check);
  const port = option('port', portNumber);
  return {
    port: port === 0 ? undefined : port,
    mqttPort: option('mqttPort', portNumber) ?? 0,
    dataDir: option('dataDir', (value) => {
      if (typeof value !== 'string' || value.trim() === '')
        throw new Error(`must be a folder's path, got ${describe(value)}`);
      return resolve(value);
    }),
    speed:
      option('speed', (value) => {
        if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 10_000)
          throw new Error(`must be a number above 0 and at most 10000, got ${describe(value)}`);
        return value;
      }) ?? 1,
    accessMode: option('accessMode', (value) => {
      const mode = ACCESS_MODES.find((candidate) => candidate === value);
      if (mode === undefined) throw new Error(`must be ${ACCESS_MODES.join(' or ')}, got ${describe(value)}`);
      return mode;
    }),
    databaseUrl: option('databaseUrl', (value) => {
      if (typeof value !== 'string') throw new Error(`must be a postgres:// URL, got ${describe(value)}`);
      parsePostgresUrl(value, 'databaseUrl');
      return value;
    }),
    logLevel:
      option('logLevel', (value) => {
        if (typeof value !== 'string') throw new Error(`must be a log level, got ${describe(value)}`);
        return parseLogLevel(value, 'logLevel');
      }) ?? 'silent',
  };
}

function portNumber(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65_535)
    throw new Error(`must be an integer from 0 to 65535 (0: a free one), got ${describe(value)}`);
  return value;
}

/** The option's value through `check`, or undefined when it is not given.
 * A check's Error says what is wrong and becomes `name must …`; a
 * ConfigError of the API's parsers names the option itself. */
function checked<T>(given: Record<string, unknown>, name: OptionName, check: (value: unknown) => T): T | undefined {
  const value = given[name];
  if (value === undefined) return undefined;
  try {
    return check(value);
  } catch (error) {
    throw new BenchOptionError(name, error instanceof ConfigError ? error.message : `${name} ${messageOf(error)}`);
  }
}

/** A value as a message shows it: strings quoted, numbers and booleans as
 * they are, anything else by its type. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return typeof value;
}
