// The HTTP server below the routes: its timeouts, and the errors node and
// fastify answer before a route's error handler is reached (a request that is
// not valid HTTP, headers too large, a bad URL, an Expect header, no Host, a
// compressed body). Each answers the registry's error body, or an HTML page
// where the paths are a page's (the payment page's, handed in as
// `HtmlErrorPages`), never node's or fastify's own bodies; every answer,
// these and the routes', says `X-Content-Type-Options: nosniff`.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { ApiConfig } from '../config/index.js';
import { ApiError, type ApiErrorCode } from './errors.js';

/** X-Content-Type-Options on every response, also those written below the routes. */
const NOSNIFF = { name: 'x-content-type-options', value: 'nosniff' } as const;

/** Paths answered in HTML rather than JSON, with the page their errors get. */
export interface HtmlErrorPages {
  /** Whether a request path (with its query) is one of the pages'. */
  owns(url: string): boolean;
  /** The whole HTML document for an error status. */
  page(status: number): string;
  /** The headers of every such page (content type, CSP, nosniff). */
  readonly headers: Readonly<Record<string, string>>;
}

/** fastify's own options for the timeouts and the error paths it owns. */
export function serverOptions(
  config: ApiConfig,
  pages: HtmlErrorPages,
): Pick<
  FastifyServerOptions,
  'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout' | 'clientErrorHandler' | 'frameworkErrors'
> {
  return {
    // node answers 408 through clientError when a request (headers and body)
    // has not fully arrived in time; without it a stalled body is held forever.
    requestTimeout: config.httpRequestTimeoutMs,
    // Socket inactivity: a connection silent this long is destroyed.
    connectionTimeout: config.httpConnectionTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    clientErrorHandler(this: FastifyInstance, error: ClientError, socket: Socket) {
      answerClientError(this, pages, error, socket);
    },
    frameworkErrors(error, request, reply) {
      answerFrameworkError(pages, error, request, reply);
    },
  };
}

/** What fastify's options cannot set, on the node server before it listens. */
export function configureServer(app: FastifyInstance, config: ApiConfig, pages: HtmlErrorPages): void {
  // Both are read by node at run time; @types/node does not declare them.
  const server = app.server as typeof app.server & { connectionsCheckingInterval: number; requireHostHeader: boolean };
  server.headersTimeout = config.httpHeadersTimeoutMs;
  // node checks request and headers timeouts on this period (30 s by
  // default), so a timeout would fire up to that much late.
  server.connectionsCheckingInterval = Math.min(1000, Math.max(50, Math.floor(config.httpHeadersTimeoutMs / 4)));
  // node answers a missing Host itself, with an empty 400; the hook below answers it instead.
  server.requireHostHeader = false;
  // Without a listener node answers an unknown Expect with an empty 417.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    answerExpectation(pages, request, response);
  });
  app.addHook('onRequest', (request, reply, done) => {
    // Every answer, errors included, is what its Content-Type says: no browser sniffs a JSON body into HTML.
    void reply.header(NOSNIFF.name, NOSNIFF.value);
    done(requestHeadersError(request));
  });
}

/** A missing Host (RFC 9112 3.2) or a Content-Encoding we do not decode, before any body is read. */
function requestHeadersError(request: FastifyRequest): ApiError | undefined {
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
    return new ApiError('bad_request', 'An HTTP/1.1 request must have a Host header.');
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return new ApiError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not supported: send the body uncompressed.`,
    );
  }
  return undefined;
}

function answerExpectation(pages: HtmlErrorPages, request: IncomingMessage, response: ServerResponse): void {
  const error = new ApiError('expectation_failed', `Expect: ${request.headers.expect ?? ''} is not supported.`);
  const { body, headers } = rendered(pages, error, request.url ?? '');
  response.writeHead(error.status, { ...headers, 'content-length': Buffer.byteLength(body), connection: 'close' });
  response.end(body);
}

/** The body and headers of an error, as HTML on a page's paths. */
function rendered(
  pages: HtmlErrorPages,
  error: ApiError,
  url: string,
): { body: string; headers: Readonly<Record<string, string>> } {
  if (pages.owns(url)) return { body: pages.page(error.status), headers: pages.headers };
  return {
    body: JSON.stringify(error.body()),
    headers: { 'content-type': 'application/json; charset=utf-8', [NOSNIFF.name]: NOSNIFF.value },
  };
}

/** The router's errors: a malformed percent-encoding, a too long path parameter. */
function answerFrameworkError(
  pages: HtmlErrorPages,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const apiError =
    error.code === 'FST_ERR_BAD_URL'
      ? new ApiError('bad_request', 'The URL is not valid percent-encoded UTF-8.')
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ApiError('uri_too_long')
        : undefined;
  if (apiError === undefined) {
    request.log.error({ err: error }, 'unhandled framework error');
  }
  const answer = apiError ?? new ApiError('internal_error');
  // fastify calls this before any onRequest hook.
  void reply.header(NOSNIFF.name, NOSNIFF.value);
  if (pages.owns(request.url)) {
    void reply.status(answer.status).headers(pages.headers).send(pages.page(answer.status));
    return;
  }
  void reply.status(answer.status).send(answer.body());
}

/** node's clientError codes and what they become; anything else is a 400. */
const CLIENT_ERROR_CODES: Record<string, ApiErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
  HPE_HEADER_OVERFLOW: 'header_fields_too_large',
};

interface ClientError extends Error {
  code?: string;
  /** The bytes node could not parse (a Buffer, for parse errors). */
  rawPacket?: unknown;
}

/**
 * node's 'clientError': the bytes are not a request it will parse (both
 * Content-Length and Transfer-Encoding, two Content-Lengths, a NUL in a
 * header, a bad chunk), the headers are too large, or the request timed out.
 * There is no request object: the answer is written on the socket, which is
 * then closed (its stream position is unknown).
 */
function answerClientError(app: FastifyInstance, pages: HtmlErrorPages, error: ClientError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = (error.code === undefined ? undefined : CLIENT_ERROR_CODES[error.code]) ?? 'bad_request';
  const apiError =
    code === 'bad_request' ? new ApiError('bad_request', 'The request is not valid HTTP/1.1.') : new ApiError(code);
  app.log.debug({ err: error }, `client error: answered ${apiError.status}`);
  // A response already under way on this socket cannot be followed by another.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const { body, headers } = rendered(pages, apiError, requestTarget(error.rawPacket));
    const lines = Object.entries({
      ...headers,
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    }).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}\r\n${lines.join('')}\r\n${body}`);
  }
  socket.destroy();
}

/** The request target of the bytes node could not parse, when it got that far. */
function requestTarget(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  const line = rawPacket.subarray(0, 2048).toString('latin1');
  return /^[A-Z]+ (\S+)/.exec(line)?.[1] ?? '';
}
