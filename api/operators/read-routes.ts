// GET /api/operator/parkings, /sessions, /box_logs: what the bench looks
// like now (api/operators/views.ts). Query strings are text (no coercion):
// each parameter has a pattern or an enum, and a bad one is a 422 naming it.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../db/store.js';
import type { Clock } from '../../lib/clock.js';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import type { LiveBoxStates } from '../events/live-states.js';
import { withLive } from './stream/render.js';
import { operatorParkings } from './box-entries.js';
import { decodeBoxLogCursor, operatorBoxLogs, operatorSessions } from './views.js';
import { DECIMAL_ID_PATTERN, errorResponses } from '../http/schemas.js';
import {
  operatorBoxLogSchema,
  operatorParkingSchema,
  operatorSessionSchema,
  SESSION_STATES,
  STATUS_NAMES,
} from './schemas.js';
import { typedRoutes } from '../http/typed-routes.js';

/** The store the views read, each box's newest MQTT state (`live`), and
 * the time (which revoked keys a box still takes). */
export interface OperatorReadRouteDeps {
  store: Store;
  liveStates: Pick<LiveBoxStates, 'of'>;
  clock: Pick<Clock, 'now'>;
}

/** A page holds at most this many rows; the default is DEFAULT_LIMIT. */
export const MAX_LIMIT = 500;
export const DEFAULT_LIMIT = 100;

const MODULE_ID_PATTERN = '^(0|[1-9][0-9]{0,9})$';
const limitQuery = {
  type: 'string',
  pattern: DECIMAL_ID_PATTERN,
  description: `Rows per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`,
} as const;

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const limit = Number(raw);
  if (limit > MAX_LIMIT)
    throw new ApiError('validation_failed', undefined, [{ path: 'limit', message: `must be at most ${MAX_LIMIT}` }]);
  return limit;
}

const errors = {
  ...errorResponses(401, 404, 422),
  403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
};

export function operatorReadRoutes(instance: FastifyInstance, ctx: OperatorReadRouteDeps): void {
  const app = typedRoutes(instance);
  app.get(
    '/parkings',
    {
      schema: {
        tags: ['operator'],
        summary: 'Every parking, its boxes and their last known state (no secret)',
        security: [{ operator: [] }],
        response: { 200: { type: 'array', items: operatorParkingSchema }, ...errors },
      },
    },
    async () => withLive(await operatorParkings(ctx.store, ctx.clock.now()), ctx.liveStates),
  );

  app.get(
    '/sessions',
    {
      config: refusalsAbout('parking_id'),
      schema: {
        tags: ['operator'],
        summary: 'Parking sessions, newest first',
        security: [{ operator: [] }],
        querystring: {
          type: 'object',
          properties: {
            state: { type: 'string', enum: SESSION_STATES },
            parking_id: { type: 'string', pattern: DECIMAL_ID_PATTERN, maxLength: 15 },
            limit: limitQuery,
          },
        },
        response: { 200: { type: 'array', items: operatorSessionSchema }, ...errors },
      },
    },
    (request) => {
      const { state, parking_id: parkingId } = request.query;
      const limit = limitOf(request.query.limit);
      return operatorSessions(ctx.store, {
        limit,
        ...(state === undefined ? {} : { state }),
        ...(parkingId === undefined ? {} : { parkingId: Number(parkingId) }),
      });
    },
  );

  app.get(
    '/box_logs',
    {
      schema: {
        tags: ['operator'],
        summary: 'Box logs, newest first, a page at a time (cursor pagination)',
        security: [{ operator: [] }],
        querystring: {
          type: 'object',
          properties: {
            box: {
              type: 'string',
              pattern: MODULE_ID_PATTERN,
              maxLength: 10,
              description: 'Only this box (module id).',
            },
            session: {
              type: 'string',
              pattern: DECIMAL_ID_PATTERN,
              maxLength: 15,
              description: "Only logs of this session's smart keys.",
            },
            status: { type: 'string', enum: STATUS_NAMES, description: 'Only verified responses of this status.' },
            verified: { type: 'string', enum: ['true', 'false'] },
            cursor: {
              type: 'string',
              pattern: '^[A-Za-z0-9_-]+$',
              maxLength: 64,
              description: 'next_cursor of the previous page.',
            },
            limit: limitQuery,
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['box_logs', 'next_cursor'],
            properties: {
              box_logs: { type: 'array', items: operatorBoxLogSchema },
              next_cursor: {
                type: ['string', 'null'],
                description: 'Opaque; null on the last page. Pages are stable while logs arrive.',
              },
            },
          },
          ...errors,
        },
      },
    },
    (request) => {
      const query = request.query;
      const limit = limitOf(query.limit);
      let beforeId: number | undefined;
      if (query.cursor !== undefined) {
        beforeId = decodeBoxLogCursor(query.cursor);
        if (beforeId === undefined)
          throw new ApiError('validation_failed', undefined, [
            { path: 'cursor', message: 'is not a next_cursor of this API' },
          ]);
      }
      return operatorBoxLogs(ctx.store, {
        limit,
        ...(beforeId === undefined ? {} : { beforeId }),
        ...(query.box === undefined ? {} : { moduleId: Number(query.box) }),
        ...(query.session === undefined ? {} : { sessionId: Number(query.session) }),
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.verified === undefined ? {} : { verified: query.verified === 'true' }),
      });
    },
  );
}
