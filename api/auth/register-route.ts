// POST /api/car_driver (spec 4.2): a client application registers a car
// driver. The client is checked first (401), before any field is looked at,
// so an unknown client learns nothing (not even whether an email is taken).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashSecret, verifyClientSecret } from './secrets.js';
import type { Clock } from '../../lib/clock.js';
import type { ApiConfig } from '../config/index.js';
import type { ClientAppRepository } from './client-apps-repository.js';
import { ApiError, type ErrorDetail } from '../http/errors.js';
import { publicUser, type UserRepository } from './users-repository.js';
import {
  EMAIL_MAX_LENGTH,
  EMAIL_PATTERN,
  NAME_MAX_LENGTH,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PHONE_MAX_LENGTH,
  PRINTABLE_TEXT_PATTERN,
  errorResponses,
} from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';

/** Names and phone: printable text (schemas.ts), trimmed when stored. */
const text = (maxLength: number) => ({ type: 'string', maxLength, pattern: PRINTABLE_TEXT_PATTERN }) as const;

const bodySchema = {
  type: 'object',
  description: 'Unknown fields are ignored.',
  required: ['api_car_driver_fo_user', 'client_app_id', 'client_secret'],
  properties: {
    api_car_driver_fo_user: {
      type: 'object',
      required: ['email', 'password', 'password_confirmation', 'first_name', 'last_name', 'phone'],
      properties: {
        email: {
          type: 'string',
          maxLength: EMAIL_MAX_LENGTH,
          pattern: EMAIL_PATTERN,
          description: 'Unique, case-insensitive; stored lowercased.',
        },
        password: { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH },
        password_confirmation: { type: 'string', maxLength: PASSWORD_MAX_LENGTH, description: 'Must equal password.' },
        first_name: text(NAME_MAX_LENGTH),
        last_name: text(NAME_MAX_LENGTH),
        phone: text(PHONE_MAX_LENGTH),
      },
    },
    client_app_id: { type: 'string', maxLength: 256 },
    client_secret: { type: 'string', maxLength: 256 },
  },
} as const;

/** The client credentials of a body of any shape, if it has them as strings. */
function clientCredentialsOf(body: unknown): { id: string; secret: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { client_app_id: id, client_secret: secret } = body as Record<string, unknown>;
  if (typeof id !== 'string' || typeof secret !== 'string' || id.length > 256 || secret.length > 256) return undefined;
  return { id, secret };
}

/** The client app to check, the users to add, the hashing cost, created_at. */
export interface RegisterDriverRouteDeps {
  config: Pick<ApiConfig, 'scryptLog2N'>;
  clock: Clock;
  clientApps: Pick<ClientAppRepository, 'findByClientAppId'>;
  users: Pick<UserRepository, 'findByEmail' | 'insert'>;
}

export function registerDriverRoutes(instance: FastifyInstance, ctx: RegisterDriverRouteDeps): void {
  const app = typedRoutes(instance);
  async function checkClient(request: FastifyRequest): Promise<void> {
    const credentials = clientCredentialsOf(request.body);
    if (!credentials) throw new ApiError('invalid_client', 'client_app_id and client_secret are required.');
    const client = await ctx.clientApps.findByClientAppId(credentials.id);
    const ok = await verifyClientSecret(credentials.secret, client?.client_secret_hash);
    if (!ok) throw new ApiError('invalid_client');
  }

  app.post(
    '/api/car_driver',
    {
      schema: {
        tags: ['car driver'],
        summary: 'Register a car driver (spec 4.2)',
        body: bodySchema,
        response: {
          201: { $ref: 'User#', description: 'The driver was created.' },
          ...errorResponses(400, 401, 413, 415, 422, 503),
        },
      },
      // Before schema validation: the client must be known before fields are judged.
      preValidation: checkClient,
    },
    async (request, reply) => {
      const fields = request.body.api_car_driver_fo_user;
      const details: ErrorDetail[] = [];
      if (fields.password !== fields.password_confirmation) {
        details.push({ path: 'api_car_driver_fo_user.password_confirmation', message: 'must match password' });
      }
      if (await ctx.users.findByEmail(fields.email))
        details.push({ path: 'api_car_driver_fo_user.email', message: 'is already taken' });
      if (details.length > 0) throw new ApiError('validation_failed', undefined, details);

      const passwordHash = await hashSecret(fields.password, ctx.config.scryptLog2N);
      const user = {
        email: fields.email,
        passwordHash,
        firstName: fields.first_name.trim(),
        lastName: fields.last_name.trim(),
        phone: fields.phone.trim(),
      };
      const row = await ctx.users.insert(user, ctx.clock.now());
      // A concurrent registration (in this process or another) may have taken
      // the email while we hashed: the unique constraint refuses the second.
      if (row === undefined)
        throw new ApiError('validation_failed', undefined, [
          { path: 'api_car_driver_fo_user.email', message: 'is already taken' },
        ]);
      return reply.status(201).header('Location', '/api/car_driver/me').send(publicUser(row));
    },
  );
}
