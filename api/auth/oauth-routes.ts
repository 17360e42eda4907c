// POST /api/oauth/token (RFC 6749, spec 4.3) and POST /api/oauth/revoke
// (RFC 7009). Both take JSON or form-encoded bodies and answer errors as
// RFC 6749 5.2 `{error, error_description}`, so they live in their own
// encapsulated scope with the form parser and their own error handler.
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authenticateClient,
  BASIC_CHALLENGE,
  passwordGrant,
  refreshGrant,
  revokeToken,
  type ClientCredentials,
  type OAuthDeps,
} from './oauth.js';
import type { ApiConfig } from '../config/index.js';
import { OAuthError } from '../http/errors.js';
import { oauthErrorHandler } from '../http/error-handler.js';
import { typedRoutes } from '../http/typed-routes.js';

const param = (description: string) => ({ type: 'string', maxLength: 4096, description }) as const;

const clientParams = {
  client_app_id: param("The client application id (the spec's name)."),
  client_id: param("The same, under RFC 6749's name."),
  client_secret: param('The client secret. Or authenticate with HTTP Basic instead.'),
};

const tokenBodySchema = {
  type: 'object',
  description:
    'JSON or application/x-www-form-urlencoded. Unknown fields are ignored; a repeated one is invalid_request.',
  properties: {
    grant_type: { type: 'string', maxLength: 64, description: 'password or refresh_token' },
    username: param("password grant: the driver's email."),
    password: param("password grant: the driver's password."),
    refresh_token: param('refresh_token grant: the refresh token.'),
    ...clientParams,
  },
} as const;

const tokenResponseSchema = {
  type: 'object',
  required: ['access_token', 'refresh_token', 'token_type', 'expires_in', 'created_at'],
  properties: {
    access_token: { type: 'string', description: '256 random bits, base64url.' },
    refresh_token: {
      type: 'string',
      description:
        '256 random bits, base64url; single use (rotated): used again, it revokes every token of its login (RFC 9700 4.14.2).',
    },
    token_type: { type: 'string', enum: ['bearer'] },
    expires_in: { type: 'integer', description: 'Access token lifetime in seconds (TOKEN_TTL_SECONDS, 7200).' },
    created_at: { type: 'integer', description: 'Unix seconds.' },
  },
} as const;

const oauthErrors = {
  400: { $ref: 'OAuthErrorBody#', description: 'invalid_request, invalid_grant or unsupported_grant_type.' },
  401: { $ref: 'OAuthErrorBody#', description: 'invalid_client (with WWW-Authenticate: Basic when Basic was used).' },
  413: { $ref: 'OAuthErrorBody#', description: 'Body larger than BODY_LIMIT_BYTES.' },
  415: { $ref: 'OAuthErrorBody#', description: 'Neither JSON nor form-encoded.' },
  503: {
    $ref: 'OAuthErrorBody#',
    description:
      'temporarily_unavailable: the database is busy (another process holds its write lock), with Retry-After.',
  },
};

/** Client credentials from HTTP Basic or the body; one method only (RFC 6749 2.3). */
export function clientCredentials(
  request: FastifyRequest,
  body: { client_app_id?: string; client_id?: string; client_secret?: string },
): ClientCredentials | undefined {
  const header = request.headers.authorization;
  const inBody = body.client_app_id ?? body.client_id;
  if (body.client_app_id !== undefined && body.client_id !== undefined && body.client_app_id !== body.client_id) {
    throw new OAuthError('invalid_request', 'client_app_id and client_id differ.');
  }
  if (header !== undefined && /^Basic /i.test(header)) {
    if (inBody !== undefined || body.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'Authenticate the client with HTTP Basic or in the body, not both.');
    }
    return parseBasic(header.slice(6).trim());
  }
  if (inBody === undefined || body.client_secret === undefined) return undefined;
  return { clientAppId: inBody, clientSecret: body.client_secret, viaBasic: false };
}

/** RFC 6749 2.3.1: base64 of form-encoded id ":" form-encoded secret. */
function parseBasic(encoded: string): ClientCredentials {
  const fail = () =>
    new OAuthError('invalid_client', 'Malformed HTTP Basic credentials.', { 'WWW-Authenticate': BASIC_CHALLENGE });
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw fail();
  try {
    const formDecode = (part: string) => decodeURIComponent(part.replaceAll('+', ' '));
    return {
      clientAppId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
      viaBasic: true,
    };
  } catch {
    throw fail();
  }
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new OAuthError('invalid_request', `${name} is required.`);
  return value;
}

/** The OAuth logic's dependencies, and the body limit of form bodies. */
export type OAuthRouteDeps = OAuthDeps & { config: Pick<ApiConfig, 'bodyLimitBytes'> };

export async function oauthRoutes(instance: FastifyInstance, ctx: OAuthRouteDeps): Promise<void> {
  const app = typedRoutes(instance);
  await app.register(formbody, { bodyLimit: ctx.config.bodyLimitBytes });
  app.setErrorHandler(oauthErrorHandler);
  // Token responses must never be cached (RFC 6749 5.1).
  app.addHook('onSend', (_request, reply, payload, done) => {
    void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    done(null, payload);
  });

  app.post(
    '/api/oauth/token',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Obtain or refresh tokens (spec 4.3, RFC 6749)',
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: tokenBodySchema,
        security: [{}, { basic: [] }],
        response: {
          200: tokenResponseSchema,
          ...oauthErrors,
          429: { $ref: 'OAuthErrorBody#', description: 'too_many_failed_logins, with Retry-After.' },
        },
      },
    },
    async (request) => {
      const body = request.body; // an object: fastify validates a missing body as null, which its schema refuses
      const grantType = required(body.grant_type, 'grant_type');
      switch (grantType) {
        case 'password': {
          const username = required(body.username, 'username');
          const password = required(body.password, 'password');
          return passwordGrant(ctx, clientCredentials(request, body), username, password, request.ip);
        }
        case 'refresh_token': {
          const refreshToken = required(body.refresh_token, 'refresh_token');
          const client = await authenticateClient(ctx, clientCredentials(request, body));
          return await refreshGrant(ctx, client, refreshToken);
        }
        default:
          throw new OAuthError('unsupported_grant_type');
      }
    },
  );

  app.post(
    '/api/oauth/revoke',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Revoke an access or refresh token (RFC 7009)',
        description:
          'Revokes the access + refresh pair holding the token. Answers 200 with an empty body whether or not the token existed (or belonged to another client).',
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: {
          type: 'object',
          properties: {
            token: param('The access or refresh token.'),
            token_type_hint: param('access_token or refresh_token: where to look first.'),
            ...clientParams,
          },
        },
        security: [{}, { basic: [] }],
        response: { 200: { type: 'null', description: 'Empty body.' }, ...oauthErrors },
      },
    },
    async (request, reply) => {
      const body = request.body; // an object: fastify validates a missing body as null, which its schema refuses
      const token = required(body.token, 'token');
      const client = await authenticateClient(ctx, clientCredentials(request, body));
      await revokeToken(ctx, client, token, body.token_type_hint);
      // An empty body (RFC 7009 2.2): nothing to serialise, so no payload of the schema's type.
      return (reply as FastifyReply).status(200).send();
    },
  );
}
