// GET /pay/:token (the pay_url of spec 4.4, opened in the phone's web view)
// and POST /pay/:token (the sandbox form's callback). HTML in, HTML out, in
// their own scope: forms are parsed here, and even a malformed request gets
// a page, never a JSON error or a 500.
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { renderPage } from './page.js';
import type { PageResult, PaymentProvider } from './provider.js';
import { isDatabaseBusy } from '../db/busy.js';
import { BUSY_RETRY_AFTER_SECONDS } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import type { HtmlErrorPages } from '../http/http-server.js';
import { typedRoutes } from '../http/typed-routes.js';

/** No scripts, no external anything; the token in the URL never leaks by Referer. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

function send(reply: FastifyReply, page: PageResult): FastifyReply {
  return reply.status(page.status).headers(PAGE_HEADERS).send(page.html);
}

/** The page answered for a request that cannot be served (status 4xx or 500),
 * also written by the server-level error paths (paymentErrorPages). */
function errorPage(status: number): string {
  const message =
    status >= 500 ? 'Something went wrong. Try again.' : 'The request could not be read. Go back and try again.';
  return renderPage({ title: 'Payment', message, form: false });
}

function sendErrorPage(reply: FastifyReply, status: number): FastifyReply {
  return send(reply, { status, html: errorPage(status) });
}

/** Whether a request path is one of the payment page's (HTML answers). */
function isPaymentPath(url: string): boolean {
  return url.startsWith('/pay/');
}

/** The payment page's paths answer their errors in HTML, those the server
 * writes below the routes too (api/http/http-server.ts). */
export const paymentErrorPages: HtmlErrorPages = {
  owns: isPaymentPath,
  page: errorPage,
  headers: PAGE_HEADERS,
};

/** A parsed body that can hold form fields: an object, not null, not an array. */
function isFields(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

const tokenParams = { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } as const;

/** The query's return_url as sent: the query has no schema, the provider judges it. */
function returnUrlOf(query: unknown): unknown {
  return typeof query === 'object' && query !== null ? (query as Record<string, unknown>).return_url : undefined;
}

/** The provider serves the pay page and takes its callback. */
export interface PayRouteDeps {
  paymentProvider: Pick<PaymentProvider, 'page' | 'callback'>;
}

export async function payRoutes(instance: FastifyInstance, ctx: PayRouteDeps): Promise<void> {
  const app = typedRoutes(instance);
  await app.register(formbody, { bodyLimit: 16_384 });
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (isDatabaseBusy(error)) {
      request.log.warn({ err: error }, 'database busy: answered 503');
      void reply.header('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
      void send(reply, {
        status: 503,
        html: renderPage({
          title: 'Payment',
          message: 'The service is busy and nothing was recorded. Try again in a moment.',
          form: false,
        }),
      });
      return;
    }
    // ApiErrors come from the server-wide hooks (a missing Host, a Content-Encoding).
    const given = error instanceof ApiError ? error.status : error.statusCode;
    const status = given !== undefined && given >= 400 && given < 500 ? given : 500;
    if (status === 500) request.log.error({ err: error }, 'unhandled error on a payment page');
    void sendErrorPage(reply, status);
  });

  app.get(
    '/pay/:token',
    {
      schema: {
        tags: ['payment'],
        summary: 'The sandbox payment page (HTML)',
        params: tokenParams,
        produces: ['text/html'],
      },
    },
    async (request, reply) =>
      send(reply, await ctx.paymentProvider.page(request.params.token, returnUrlOf(request.query))),
  );

  // The body is whatever a parser made of it (form fields, or any JSON: null, an array), hence unknown.
  app.post(
    '/pay/:token',
    {
      schema: {
        tags: ['payment'],
        summary: 'The sandbox payment form: action=pay (card_number, expiry MM/YY) or action=decline (HTML)',
        consumes: ['application/x-www-form-urlencoded'],
        params: tokenParams,
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const body = request.body;
      const form = isFields(body) ? body : {};
      return send(reply, await ctx.paymentProvider.callback(request.params.token, form));
    },
  );
}
