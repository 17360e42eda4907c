// POST /api/car_driver/parking_sessions (spec 4.4), GET .../current and
// PUT .../:id/finalize. Authentication runs first (onRequest), so a request
// without a valid token is 401 whatever its body.
import type { FastifyInstance } from 'fastify';
import { bearerAuth, type BearerDeps } from '../auth/index.js';
import { MISSING_IS_400 } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { formatMinorUnits } from '../parkings/index.js';
import { errorResponses } from '../http/schemas.js';
import { finalizeResponseSchema } from './schemas.js';
import { createSession, finalizeSession, type SessionCreateDeps } from './service.js';
import { createdSessionBody, sessionResponseBody, type SessionViewDeps } from './view.js';
import { typedRoutes } from '../http/typed-routes.js';

/** The body of a creation. Exported so that a test can add a field and see it
 * enforced. A parameter absent or null is a 400 missing_parameter, one of the
 * wrong type a 422 (MISSING_IS_400, error-handler.ts). */
export const createSessionBodySchema = {
  type: 'object',
  required: ['parking_session'],
  properties: {
    parking_session: {
      type: 'object',
      required: ['secured_parking_id'],
      properties: {
        secured_parking_id: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      },
    },
  },
} as const;

const CREATE_DESCRIPTION = [
  'Body: `{"parking_session": {"secured_parking_id": <int>}}`; unknown fields are ignored.',
  '400 missing_parameter when parking_session or secured_parking_id is missing (or null); 422 validation_failed when of the wrong type;',
  '404 resource_not_found for an unknown parking; 422 session_refused (parking inactive, without boxes, or the driver already has an open session);',
  "429 too_many_sessions with Retry-After past the driver's limit (SESSION_CREATE_BURST at once, then SESSION_CREATE_RATE_PER_MINUTE).",
].join(' ');

function requireUser(request: { user: { id: number } | null }): number {
  if (!request.user) throw new ApiError('unauthorized');
  return request.user.id;
}

/** The session service (with the creation limit) and view, and bearer authentication. */
export type ParkingSessionRouteDeps = BearerDeps & SessionCreateDeps & SessionViewDeps;

export function parkingSessionRoutes(instance: FastifyInstance, ctx: ParkingSessionRouteDeps): void {
  const app = typedRoutes(instance);
  const authenticate = bearerAuth(ctx);

  app.post(
    '/api/car_driver/parking_sessions',
    {
      schema: {
        tags: ['parking sessions'],
        summary: 'Create a pay-per-use parking session with payment (spec 4.4, V1)',
        description: CREATE_DESCRIPTION,
        security: [{ bearer: [] }],
        body: createSessionBodySchema,
        response: {
          201: { $ref: 'SessionResponse#' },
          ...errorResponses(400, 401, 404, 413, 415, 422, 503),
          429: {
            $ref: 'ErrorBody#',
            description:
              "too_many_sessions: the driver's creations went past SESSION_CREATE_BURST at once, then SESSION_CREATE_RATE_PER_MINUTE; nothing was created. Retry after Retry-After seconds.",
          },
        },
      },
      config: MISSING_IS_400,
      onRequest: authenticate,
    },
    async (request, reply) => {
      const userId = requireUser(request);
      const created = await createSession(ctx, userId, request.body.parking_session.secured_parking_id);
      return reply
        .status(201)
        .header('Location', '/api/car_driver/parking_sessions/current')
        .send(createdSessionBody(ctx, created));
    },
  );

  app.get(
    '/api/car_driver/parking_sessions/current',
    {
      schema: {
        tags: ['parking sessions'],
        summary: "The driver's open session (entering, active or exiting), as the creation response",
        security: [{ bearer: [] }],
        response: { 200: { $ref: 'SessionResponse#' }, ...errorResponses(401, 404) },
      },
      onRequest: authenticate,
    },
    async (request) => {
      const session = await ctx.sessions.findOpenOfUser(requireUser(request));
      if (!session)
        throw new ApiError('resource_not_found', 'The driver has no open parking session.', [
          { path: 'parking_session', message: 'none open' },
        ]);
      return sessionResponseBody(ctx, session);
    },
  );

  app.put(
    '/api/car_driver/parking_sessions/:id/finalize',
    {
      schema: {
        tags: ['parking sessions'],
        summary:
          'End the session now: final amount for the minutes used; past the window, the extra due and an exit key',
        security: [{ bearer: [] }],
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', description: 'The session id; anything else is 404.' } },
        },
        response: { 200: finalizeResponseSchema, ...errorResponses(401, 404, 422, 503) },
      },
      onRequest: authenticate,
    },
    async (request) => {
      const userId = requireUser(request);
      const raw = request.params.id;
      if (!/^[0-9]{1,15}$/.test(raw))
        throw new ApiError('resource_not_found', undefined, [
          { path: 'id', message: `no parking session ${raw.slice(0, 40)} of this driver` },
        ]);
      const { session, extraMinor } = await finalizeSession(ctx, userId, Number(raw));
      return { ...(await sessionResponseBody(ctx, session)), extra_amount: formatMinorUnits(extraMinor) };
    },
  );
}
