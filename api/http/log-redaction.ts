// No secret carried in a URL's query reaches a log line. A client may put
// one there (`?access_token=` is refused with a 401, but it was sent), and
// the event stream's single-use `?ticket=` is one by design: the request
// logger, the error logger and every `url` field print such a parameter's
// value as `[redacted]`. The parameters are named case-insensitively and
// after percent-decoding, as the query parser reads them.
import { stdSerializers } from 'pino';

/** What the error logger prints of an error. */
export interface SerializedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

/** Query parameters whose value is a secret. */
export const SECRET_PARAMETERS: ReadonlySet<string> = new Set([
  'access_token',
  'ticket',
  'token',
  'refresh_token',
  'client_secret',
  'password',
]);

export const REDACTED = '[redacted]';

function isSecretName(raw: string): boolean {
  let name = raw.replaceAll('+', ' ');
  try {
    name = decodeURIComponent(name);
  } catch {
    // A malformed escape: judged as written.
  }
  return SECRET_PARAMETERS.has(name.toLowerCase());
}

/** `a=1&token=x` with the secret parameters' values redacted. */
function redactParameters(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals !== -1 && isSecretName(part.slice(0, equals)) ? `${part.slice(0, equals)}=${REDACTED}` : part;
    })
    .join('&');
}

/** A URL or request target with the value of every secret parameter of its
 * query (and fragment) replaced by `[redacted]`; anything else unchanged. */
export function redactUrl(url: string): string {
  const hash = url.indexOf('#');
  const beforeHash = hash === -1 ? url : url.slice(0, hash);
  const query = beforeHash.indexOf('?');
  const head =
    query === -1 ? beforeHash : `${beforeHash.slice(0, query + 1)}${redactParameters(beforeHash.slice(query + 1))}`;
  return hash === -1 ? head : `${head}#${redactParameters(url.slice(hash + 1))}`;
}

const SECRET_IN_TEXT = new RegExp(`(?<![\\w%])(${[...SECRET_PARAMETERS].join('|')})=[^&#\\s'"<>]*`, 'gi');

/** Free text (an error's message or stack) with `name=value` of every secret
 * parameter redacted. */
export function redactText(text: string): string {
  return text.replace(SECRET_IN_TEXT, `$1=${REDACTED}`);
}

/** A request's bytes as node kept them on a parse error: the request line
 * alone, redacted (the headers may hold an Authorization). */
function requestLineOf(packet: Buffer): string {
  const line = packet.subarray(0, 2048).toString('latin1').split(/\r?\n/, 1)[0] ?? '';
  const [, method = '', target = '', rest = ''] = /^(\S+ )(\S+)(.*)$/.exec(line) ?? [];
  return redactText(target === '' ? line : `${method}${redactUrl(target)}${rest}`);
}

/** pino's error serializer, then every string redacted and every buffer
 * (node's `rawPacket`) reduced to its redacted request line. */
export function redactedError(error: Error): SerializedError {
  const serialized = stdSerializers.err(error);
  const out: SerializedError = { type: serialized.type, message: '', stack: '' };
  for (const [key, value] of Object.entries(serialized)) {
    out[key] = typeof value === 'string' ? redactText(value) : Buffer.isBuffer(value) ? requestLineOf(value) : value;
  }
  return out;
}

/** A `url` field of a log line, whatever logged it (the forwarding worker's delivery URL). */
export function redactedUrlField(value: unknown): unknown {
  return typeof value === 'string' ? redactUrl(value) : value;
}
