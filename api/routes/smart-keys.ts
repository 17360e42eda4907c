// GET /api/car_driver/smart_keys (spec 4.5): the driver's keys in the 2.6
// structure, oldest first; never another driver's.
import type { FastifyInstance } from 'fastify';
import { bearerAuth, type BearerDeps } from '../auth/bearer.js';
import { ApiError } from '../errors.js';
import type { ParkingsSqlite, ParkingRow } from '../repositories/parkings.js';
import type { SmartKeyRepository } from '../repositories/smart-keys.js';
import { errorResponses } from '../schemas.js';
import { smartKeyBody, type SmartKeyViewDeps } from '../sessions/view.js';

/** The driver's keys, their parkings and boxes, and bearer authentication. */
export interface SmartKeyRouteDeps extends BearerDeps, SmartKeyViewDeps {
  smartKeys: Pick<SmartKeyRepository, 'listOfUser'>;
  parkingsSqlite: Pick<ParkingsSqlite, 'findById'>;
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
    (request) => {
      if (!request.user) throw new ApiError('unauthorized');
      const parkings = new Map<number, ParkingRow | undefined>();
      return ctx.smartKeys.listOfUser(request.user.id).flatMap((key) => {
        if (!parkings.has(key.parking_id)) parkings.set(key.parking_id, ctx.parkingsSqlite.findById(key.parking_id));
        const parking = parkings.get(key.parking_id);
        return parking ? [smartKeyBody(ctx, key, parking)] : [];
      });
    },
  );
}
