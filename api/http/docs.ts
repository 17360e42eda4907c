// OpenAPI 3 document (GET /openapi.json) and the browsable /docs. Registered
// before the routes so @fastify/swagger sees every route's schema.
//
// /docs and its assets (/docs/static/...) are Swagger UI: its own scripts and
// stylesheets from this origin, images (some as data: URIs), and fetch to this
// origin (the document, "Try it out"). Their Content-Security-Policy allows
// that and nothing else (the one inline stylesheet by its hash): no inline
// script, no other origin, no frame; no page
// may frame them (X-Frame-Options and frame-ancestors), and they send no
// Referer. `X-Content-Type-Options: nosniff` is on every response of the API
// (http-server.ts).
import { createHash } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_ERRORS, OAUTH_ERRORS } from './errors.js';

/** The one inline stylesheet Swagger UI writes: the `<style>` of its top
 * bar's logo (an SVG, in swagger-ui-standalone-preset.js), allowed by its
 * hash alone. A Swagger UI whose logo differs breaks it, and
 * test/api/http/docs.test.ts says so. */
const SWAGGER_LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}';
const SWAGGER_LOGO_STYLE_HASH = `'sha256-${createHash('sha256').update(SWAGGER_LOGO_STYLE).digest('base64')}'`;

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' ${SWAGGER_LOGO_STYLE_HASH}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of /docs and its assets, beside the API's own nosniff. */
export const DOCS_HEADERS = {
  'content-security-policy': DOCS_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;

/** Swagger UI renders descriptions as Markdown, HTML included: `<token>`
 * would be an unknown tag and vanish. */
function markdownText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function registryTable(): string {
  const rows = Object.entries(API_ERRORS).map(
    ([code, { status, message }]) => `| \`${code}\` | ${status} | ${markdownText(message)} |`,
  );
  const oauthRows = Object.entries(OAUTH_ERRORS).map(
    ([code, { status, message }]) => `| \`${code}\` | ${status} | ${markdownText(message)} |`,
  );
  return [
    'Every error but those of the OAuth endpoints has the body `{"error", "message", "details": [{"path", "message"}]}`.',
    'Unknown body fields are ignored. Malformed JSON gives 400, a body over BODY_LIMIT_BYTES 413.',
    '',
    '| error | status | meaning |',
    '|---|---|---|',
    ...rows,
    '',
    'The OAuth endpoints answer RFC 6749 5.2 bodies `{"error", "error_description"}`:',
    '',
    '| error | status | meaning |',
    '|---|---|---|',
    ...oauthRows,
  ].join('\n');
}

export async function docsRoutes(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'parkbench parking access API', version, description: registryTable() },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token from POST /api/oauth/token.' },
          operator: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An operator token from parkbench admin operator add (the operator routes, /api/operator/...).',
          },
          basic: {
            type: 'http',
            scheme: 'basic',
            description: 'Client authentication: client_app_id and client_secret.',
          },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  // In a scope of its own, so the headers reach Swagger UI's routes and static files only.
  await app.register(async (scope) => {
    scope.addHook('onSend', (_request, reply, payload, done) => {
      void reply.headers(DOCS_HEADERS);
      done(null, payload);
    });
    await scope.register(swaggerUi, { routePrefix: '/docs' });
  });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}
