// GET /api/car_driver/me: the authenticated driver. Not in the spec: added so
// an app can check its token and show the account.
import type { FastifyInstance } from 'fastify';
import { bearerAuth, type BearerDeps } from './bearer.js';
import { errorResponses } from '../http/schemas.js';

export function meRoutes(app: FastifyInstance, ctx: BearerDeps): void {
  app.get(
    '/api/car_driver/me',
    {
      schema: {
        tags: ['car driver'],
        summary: 'The authenticated driver (an addition to the spec)',
        security: [{ bearer: [] }],
        response: { 200: { $ref: 'User#' }, ...errorResponses(401) },
      },
      preHandler: bearerAuth(ctx),
    },
    (request) => request.user,
  );
}
