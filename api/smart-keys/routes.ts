// GET /api/car_driver/smart_keys (spec 4.5): the driver's keys in the 2.6
// structure, oldest first; never another driver's.
import type { FastifyInstance } from 'fastify';
import { bearerAuth, type BearerDeps } from '../auth/index.js';
import { ApiError } from '../http/errors.js';
import type { SmartKeyRepository } from './repository.js';
import { errorResponses } from '../http/schemas.js';
import { smartKeyBodies, type SmartKeyViewDeps } from './view.js';

/** The driver's keys, their parkings and boxes, and bearer authentication. */
export interface SmartKeyRouteDeps extends BearerDeps, SmartKeyViewDeps {
  smartKeys: Pick<SmartKeyRepository, 'listOfUser'>;
}

export function smartKeyRoutes(app: FastifyInstance, ctx: SmartKeyRouteDeps): void {
  app.get(
    '/api/car_driver/smart_keys',
    {
      schema: {
        tags: ['smart keys'],
        summary: "The driver's smart keys (spec 2.6, 4.5)",
        security: [{ bearer: [] }],
        response: { 200: { type: 'array', items: { $ref: 'SmartKey#' } }, ...errorResponses(401) },
      },
      onRequest: bearerAuth(ctx),
    },
    async (request) => {
      if (!request.user) throw new ApiError('unauthorized');
      return smartKeyBodies(ctx, await ctx.smartKeys.listOfUser(request.user.id));
    },
  );
}
