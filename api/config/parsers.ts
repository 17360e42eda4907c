// The parsers of the settings' values: each takes the raw string an operator
// wrote and the name it came under (`PORT` or `--port`), and returns the typed
// value or throws a ConfigError of one line naming it.

/** Bad configuration: the CLI prints the message as one line and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Parser<T> = (raw: string, name: string) => T;

export function integer(min: number, max: number): Parser<number> {
  return (raw, name) => {
    if (!/^\d+$/.test(raw.trim()))
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    const value = Number(raw.trim());
    if (value < min || value > max)
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return value;
  };
}

export const text: Parser<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
};

export const optionalText: Parser<string | undefined> = (raw) => (raw.trim() === '' ? undefined : raw.trim());

export const boolean: Parser<boolean> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(value)) return true;
  if (['0', 'false', 'no'].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};

/** An absolute URL of one of `protocols`, its trailing slashes dropped. */
export function url(protocols: string[]): Parser<string> {
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

/** As `url`, or unset when empty. */
export function optionalUrl(protocols: string[]): Parser<string | undefined> {
  const parse = url(protocols);
  return (raw, name) => (raw.trim() === '' ? undefined : parse(raw, name));
}

/** "parkbench-app, other-app" -> ['parkbench-app', 'other-app']; schemes a
 * browser runs or reads locally are refused whatever the operator writes. */
export const schemeList: Parser<readonly string[]> = (raw, name) => {
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
export const topicPrefix: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (value === '' || /[#+\s]/.test(value) || value.startsWith('/') || value.endsWith('/') || value.startsWith('$')) {
    throw new ConfigError(
      `${name} must be topic levels without wildcards, spaces or leading/trailing slashes, such as parkbench, got "${raw}"`,
    );
  }
  return value;
};

export const sharedGroup: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (value !== '' && !/^[A-Za-z0-9._-]{1,64}$/.test(value))
    throw new ConfigError(
      `${name} must be empty or 1 to 64 letters, digits, dots, dashes or underscores, got "${raw}"`,
    );
  return value;
};

export const clientId: Parser<string | undefined> = (raw, name) => {
  const value = raw.trim();
  if (value === '') return undefined;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(value))
    throw new ConfigError(
      `${name} must be empty or 1 to 128 letters, digits, dots, dashes or underscores, got "${raw}"`,
    );
  return value;
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export const logLevel: Parser<string> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (!LOG_LEVELS.includes(value))
    throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return value;
};
