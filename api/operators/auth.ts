// Authentication of the operator HTTP API (/api/operator/...): an onRequest
// hook for the whole prefix (api/routes/operator/index.ts). An operator's
// token is 256 random bits kept as its SHA-256 (accounts.ts): the header's
// token is hashed and looked up through the UNIQUE index, one read, then
// compared in constant time. An attacker's guess costs us one SHA-256 and
// one indexed read, no more than it costs them to send it (the login
// limiter's point: failures must not be cheap to try and dear to answer),
// and the lookup key is a hash the attacker cannot steer, so timing says
// nothing about stored tokens. Nothing caches operator tokens: `admin
// operator remove` (another process) takes effect on the next request, and
// on the operator's open event streams at their next flush (api/events/owners.ts).
//
// A token that is not an operator's goes to the drivers' bearer check: a
// driver's valid token gets 403 operator_required, anything else that
// check's 401 (unauthorized, invalid_token) with its WWW-Authenticate.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerAuth, type BearerDeps, tokenHash } from '../auth/index.js';
import { ApiError } from '../http/errors.js';
import type { OperatorRepository } from './repository.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a `ticket` query parameter instead of the bearer
     * token (GET /api/operator/events; the route checks the ticket). */
    operatorTicket?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated operator, set by the operator hook on /api/operator/...,
     * with the SHA-256 of the token it came with (what an event stream is checked against). */
    operator: { id: number; name: string; tokenHash: Buffer } | null;
  }
}

/** RFC 6750's credentials (as api/auth/bearer.ts reads them). */
const BEARER_CREDENTIALS = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const MAX_TOKEN_LENGTH = 512;

export interface OperatorAuthDeps extends BearerDeps {
  operators: Pick<OperatorRepository, 'findByTokenHash'>;
}

export function operatorAuth(ctx: OperatorAuthDeps) {
  const driverAuth = bearerAuth(ctx);
  return function authenticateOperator(
    request: FastifyRequest,
    reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    // GET /api/operator/events?ticket=T: the route takes the single-use
    // ticket itself (api/routes/operator/events.ts); an EventSource has no headers.
    if (
      request.routeOptions.config.operatorTicket === true &&
      typeof (request.query as { ticket?: unknown } | undefined)?.ticket === 'string'
    ) {
      done();
      return;
    }
    const asDriver = () =>
      driverAuth(request, reply, (error) => {
        request.user = null;
        done(error ?? new ApiError('operator_required'));
      });
    const token = BEARER_CREDENTIALS.exec(request.headers.authorization ?? '')?.[1];
    if (token === undefined || token.length > MAX_TOKEN_LENGTH) {
      asDriver();
      return;
    }
    const hash = tokenHash(token);
    ctx.operators.findByTokenHash(hash).then((operator) => {
      if (operator && operator.token_hash.length === hash.length && timingSafeEqual(operator.token_hash, hash)) {
        request.operator = { id: operator.id, name: operator.name, tokenHash: operator.token_hash };
        done();
        return;
      }
      asDriver();
    }, done);
  };
}
