// DATABASE_URL: postgres://user:password@host:port/database?sslmode=..., its
// parts as pg's client takes them; the message of a bad one shows the URL
// with its password masked.
import { ConfigError, type Parser } from './parsers.js';

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

const SSL_MODES = ['disable', 'require', 'verify-full'] as const;

/** The setting's parser: unset when empty. */
export const postgresUrl: Parser<PostgresUrl | undefined> = (raw, name) => {
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
