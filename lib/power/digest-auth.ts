// HTTP Digest access authentication (RFC 7616) as a client answers a
// challenge: what a Shelly Gen2 plug asks for once a password is set on it
// (shelly-api-docs, Authentication: SHA-256, qop "auth", the user always
// `admin`). MD5 is answered too, for a server that still offers only it.
import { createHash, randomBytes } from 'node:crypto';

export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly algorithm: 'SHA-256' | 'MD5';
  /** Whether the server offers qop=auth (else RFC 2069's form, no cnonce). */
  readonly qopAuth: boolean;
  readonly opaque?: string;
}

/** A `WWW-Authenticate: Digest ...` header's parameters; undefined when it is
 * not a Digest challenge this client can answer (another scheme, no realm or
 * nonce, an algorithm other than SHA-256 or MD5, a qop without `auth`). */
export function parseDigestChallenge(header: string | null): DigestChallenge | undefined {
  if (header === null) return undefined;
  const match = /^\s*Digest\s+(.*)$/is.exec(header);
  if (match === null) return undefined;
  const params = new Map<string, string>();
  const pattern = /([A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/g;
  for (const [, name = '', quoted, token] of (match[1] ?? '').matchAll(pattern))
    params.set(name.toLowerCase(), quoted === undefined ? (token ?? '') : quoted.replace(/\\(.)/g, '$1'));
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || nonce === undefined) return undefined;
  const algorithm = (params.get('algorithm') ?? 'MD5').toUpperCase();
  if (algorithm !== 'SHA-256' && algorithm !== 'MD5') return undefined;
  const qop = params.get('qop');
  const qopAuth = qop !== undefined && qop.split(',').some((each) => each.trim() === 'auth');
  if (qop !== undefined && !qopAuth) return undefined;
  const opaque = params.get('opaque');
  return { realm, nonce, algorithm, qopAuth, ...(opaque === undefined ? {} : { opaque }) };
}

export interface DigestRequest {
  readonly method: string;
  /** The request-target: path and query, as sent. */
  readonly uri: string;
  readonly username: string;
  readonly password: string;
  /** The client nonce; random when not given (tests give one). */
  readonly cnonce?: string;
  /** How many requests this nonce has answered, 1 first. */
  readonly nonceCount?: number;
}

/** The `Authorization` header answering the challenge (RFC 7616 section 3.4). */
export function digestAuthorization(challenge: DigestChallenge, request: DigestRequest): string {
  const hash = (text: string): string =>
    createHash(challenge.algorithm === 'SHA-256' ? 'sha256' : 'md5')
      .update(text, 'utf8')
      .digest('hex');
  const ha1 = hash(`${request.username}:${challenge.realm}:${request.password}`);
  const ha2 = hash(`${request.method}:${request.uri}`);
  const cnonce = request.cnonce ?? randomBytes(16).toString('hex');
  const nc = (request.nonceCount ?? 1).toString(16).padStart(8, '0');
  const response = challenge.qopAuth
    ? hash(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:auth:${ha2}`)
    : hash(`${ha1}:${challenge.nonce}:${ha2}`);
  const quote = (value: string): string => `"${value.replace(/(["\\])/g, '\\$1')}"`;
  const fields = [
    `username=${quote(request.username)}`,
    `realm=${quote(challenge.realm)}`,
    `uri=${quote(request.uri)}`,
    `algorithm=${challenge.algorithm}`,
    `nonce=${quote(challenge.nonce)}`,
    ...(challenge.qopAuth ? [`nc=${nc}`, `cnonce=${quote(cnonce)}`, 'qop=auth'] : []),
    `response=${quote(response)}`,
    ...(challenge.opaque === undefined ? [] : [`opaque=${quote(challenge.opaque)}`]),
  ];
  return `Digest ${fields.join(', ')}`;
}
