// OpenAPI 3 document (GET /openapi.json) and the browsable /docs. Registered
// before the routes so @fastify/swagger sees every route's schema.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_ERRORS, OAUTH_ERRORS } from '../errors.js';

function registryTable(): string {
  const rows = Object.entries(API_ERRORS).map(
    ([code, { status, message }]) => `| \`${code}\` | ${status} | ${message} |`,
  );
  const oauthRows = Object.entries(OAUTH_ERRORS).map(
    ([code, { status, message }]) => `| \`${code}\` | ${status} | ${message} |`,
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
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}
