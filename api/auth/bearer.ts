// Bearer authentication (RFC 6750) for protected routes: a preHandler that
// looks the token up by its SHA-256 hash (the bearer cache, else one indexed
// read compiled once, TokenRepository.findBearer) and decorates the request
// with the user. Revocation in this
// process takes effect on the next request; see bearer-cache.ts for other
// processes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import { ApiError } from '../http/errors.js';
import type { BearerRow, TokenRepository } from './tokens-repository.js';
import type { PublicUser } from './users-repository.js';
import type { BearerCache } from './bearer-cache.js';
import { tokenHashText } from './secrets.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated driver, set by the bearer preHandler. */
    user: PublicUser | null;
  }
}

const REALM = 'realm="parkbench"';
/** RFC 6750's credentials: "Bearer", spaces, a b64token (256 bits in base64url
 * are 43 characters). One regular expression: this runs on every request. */
const BEARER_CREDENTIALS = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const MAX_TOKEN_LENGTH = 512;

/** The token hash of the last Authorization header each connection sent. A
 * keep-alive client sends the same header on every request: comparing it
 * with its own previous one skips the parse and the SHA-256, which under load
 * cost a protected route over 1 µs of its ~13 µs of JavaScript (perf:api).
 * Only the hash is reused: the cache lookup, expiry and revocation run on
 * every request. The comparison is with what this same connection sent, so
 * its timing tells a client nothing about anyone else's token. */
const lastHeaderHash = new WeakMap<object, { header: string; hash: string }>();

/** The token hash of a well-formed Bearer header, or undefined. */
function headerTokenHash(request: FastifyRequest, header: string): string | undefined {
  const connection = request.raw.socket as object | null | undefined;
  const last = connection ? lastHeaderHash.get(connection) : undefined;
  if (last?.header === header) return last.hash;
  const token = BEARER_CREDENTIALS.exec(header)?.[1];
  if (token === undefined || token.length > MAX_TOKEN_LENGTH) return undefined;
  const hash = tokenHashText(token);
  if (connection) lastHeaderHash.set(connection, { header, hash });
  return hash;
}

function invalid(description: string): ApiError {
  return new ApiError('invalid_token', undefined, [{ path: 'Authorization', message: description }], {
    'WWW-Authenticate': `Bearer ${REALM}, error="invalid_token", error_description="${description}"`,
  });
}

/** What bearer authentication reads: the cache, else the token pairs; the clock for expiry. */
export interface BearerDeps {
  bearerCache: Pick<BearerCache, 'get' | 'set'>;
  tokens: Pick<TokenRepository, 'findBearer'>;
  clock: Clock;
}

export function bearerAuth(ctx: BearerDeps) {
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    const header = request.headers.authorization;
    if (header === undefined || header.trim() === '') {
      done(new ApiError('unauthorized', undefined, [], { 'WWW-Authenticate': `Bearer ${REALM}` }));
      return;
    }
    const hash = headerTokenHash(request, header);
    if (hash === undefined) {
      done(invalid('The Authorization header must be Bearer followed by a token.'));
      return;
    }
    const cached = ctx.bearerCache.get(hash);
    if (cached) {
      request.user = cached;
      done();
      return;
    }
    ctx.tokens.findBearer(Buffer.from(hash, 'base64url')).then((row) => {
      const error = verdict(row);
      if (error !== undefined || row === undefined) {
        done(error);
        return;
      }
      const user = {
        id: row.id,
        email: row.email,
        first_name: row.first_name,
        last_name: row.last_name,
        phone: row.phone,
      };
      ctx.bearerCache.set(hash, row.pair_id, user, row.access_expires_at);
      request.user = user;
      done();
    }, done);
  };

  /** Why the token of `row` is refused, or undefined when it is good. */
  function verdict(row: BearerRow | undefined): ApiError | undefined {
    if (!row) return invalid('The access token is unknown.');
    if (row.revoked_at !== null) return invalid('The access token was revoked.');
    if (row.access_expires_at <= ctx.clock.now()) return invalid('The access token expired.');
    return undefined;
  }
}
