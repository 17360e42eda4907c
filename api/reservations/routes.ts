// A box's reservation under the operator API:
// POST /api/operator/boxes/:module_id/reservation takes the box (201), waits
// for it in its first-come queue (wait_seconds), or renews the caller's
// reservation (its token in Parkbench-Reservation: 200); DELETE releases it
// (204); GET shows it. Mounted by api/operators/routes.ts.
import type { FastifyInstance } from 'fastify';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { errorResponses, PRINTABLE_TEXT_PATTERN } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';
import { RESERVATION_HEADER, reservationTokenOf } from './guard.js';
import type { Reservations } from './reservations.js';
import { reservationViewSchema } from './view.js';

export const RESERVATION_TTL_MAX_SECONDS = 86_400;
export const RESERVATION_WAIT_MAX_SECONDS = 3_600;
export const RESERVATION_NOTE_MAX_LENGTH = 200;

/** What the routes use: the reservations of this process, and how long a silent connection may stay open. */
export interface ReservationRouteDeps {
  readonly reservations: Reservations;
  readonly config: { readonly httpConnectionTimeoutMs: number };
}

const params = {
  type: 'object',
  required: ['module_id'],
  properties: { module_id: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$' } },
} as const;

const tokenHeader = {
  type: 'object',
  properties: {
    [RESERVATION_HEADER]: {
      type: 'string',
      maxLength: 256,
      description: "The token of the caller's reservation of the box (as POST answered it).",
    },
  },
} as const;

const takenSchema = {
  type: 'object',
  required: ['token', ...reservationViewSchema.required],
  properties: {
    token: {
      type: 'string',
      description:
        "The reservation's token (43 characters, base64url): send it in Parkbench-Reservation to drive the box, renew or release. Shown only here.",
    },
    ...reservationViewSchema.properties,
  },
} as const;

const forbidden = { 403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." } };

export function reservationRoutes(instance: FastifyInstance, deps: ReservationRouteDeps): void {
  const app = typedRoutes(instance);
  const { reservations } = deps;

  app.post(
    '/boxes/:module_id/reservation',
    {
      config: refusalsAbout('module_id'),
      schema: {
        tags: ['operator'],
        summary: 'Reserve a box (or wait in its queue), or renew your reservation of it',
        description:
          "A free box with nobody waiting is yours at once (201, with the token). A box held by another: with wait_seconds > 0 the request stays open in the box's first-come queue and answers 201 when its turn comes (the release or the expiry of those before it), or 409 box_reserved when the wait ends first, or when the API stops; a client that disconnects leaves the queue. With Parkbench-Reservation carrying your live reservation of this box: renewed, expires_at = now + ttl_seconds (200; a note given replaces the old one). A token that is not that counts as none. While the box is held, its commands, simulated faults and runs need the token (see box_reserved), and the service's own control commands to it wait for the release.",
        security: [{ operator: [] }],
        params,
        headers: tokenHeader,
        body: {
          type: 'object',
          required: ['ttl_seconds'],
          properties: {
            ttl_seconds: {
              type: 'integer',
              minimum: 1,
              maximum: RESERVATION_TTL_MAX_SECONDS,
              description: 'How long the reservation lasts unless renewed or released.',
            },
            wait_seconds: {
              type: 'integer',
              minimum: 0,
              maximum: RESERVATION_WAIT_MAX_SECONDS,
              description: 'How long to wait in the queue for a held box; 0 (the default) answers at once.',
            },
            note: {
              type: 'string',
              maxLength: RESERVATION_NOTE_MAX_LENGTH,
              pattern: PRINTABLE_TEXT_PATTERN,
              description: 'Who or what holds it (a CI job, a person), shown to the others.',
            },
          },
        },
        response: {
          200: { ...takenSchema, description: 'Renewed.' },
          201: { ...takenSchema, description: 'Taken.' },
          ...errorResponses(400, 401, 404, 415, 422),
          ...forbidden,
          409: {
            $ref: 'ErrorBody#',
            description:
              'box_reserved: another holds the box and the wait (if any) ended first, or the API stopped; the body names the holder, the note and expires_at. operation_refused: 100 requests wait for the box already.',
          },
          503: errorResponses(503)[503],
        },
      },
    },
    async (request, reply) => {
      const operator = request.operator;
      if (operator === null) throw new ApiError('unauthorized');
      const { ttl_seconds: ttlSeconds, wait_seconds: waitSeconds = 0, note } = request.body;
      const gone = new AbortController();
      if (waitSeconds > 0) {
        // The answer may come after the wait: the connection stays open that long.
        // (An injected request's socket, light-my-request's, has no timeout to move.)
        const socket: { setTimeout?: (ms: number) => unknown } = request.raw.socket;
        socket.setTimeout?.(waitSeconds * 1000 + deps.config.httpConnectionTimeoutMs);
        reply.raw.on('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
      }
      const reserved = await reservations.reserve({
        moduleId: Number(request.params.module_id),
        operator,
        ttlMs: ttlSeconds * 1000,
        waitMs: waitSeconds * 1000,
        note,
        token: reservationTokenOf(request.headers),
        gone: gone.signal,
      });
      return reply.status(reserved.outcome === 'taken' ? 201 : 200).send({ token: reserved.token, ...reserved.view });
    },
  );

  app.delete(
    '/boxes/:module_id/reservation',
    {
      config: refusalsAbout('module_id'),
      schema: {
        tags: ['operator'],
        summary: 'Release your reservation of a box; the first in its queue gets it',
        description:
          'Parkbench-Reservation carries the token POST answered. The service then sends the box the control commands it held back, in order.',
        security: [{ operator: [] }],
        params,
        headers: tokenHeader,
        response: {
          204: { type: 'null', description: 'Released.' },
          400: { $ref: 'ErrorBody#', description: 'missing_parameter: no Parkbench-Reservation header.' },
          ...errorResponses(401, 422),
          ...forbidden,
          404: {
            $ref: 'ErrorBody#',
            description:
              "resource_not_found: no such box, or the token is not a live reservation of this box by this operator (released, expired, or another's).",
          },
          503: errorResponses(503)[503],
        },
      },
    },
    async (request, reply) => {
      const operator = request.operator;
      if (operator === null) throw new ApiError('unauthorized');
      const token = reservationTokenOf(request.headers);
      if (token === undefined)
        throw new ApiError('missing_parameter', undefined, [{ path: 'Parkbench-Reservation', message: 'is required' }]);
      await reservations.release(Number(request.params.module_id), operator.id, token);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/boxes/:module_id/reservation',
    {
      config: refusalsAbout('module_id'),
      schema: {
        tags: ['operator'],
        summary: "A box's reservation: who holds it, until when, and who waits for it",
        security: [{ operator: [] }],
        params,
        response: {
          200: {
            type: 'object',
            required: ['reservation'],
            properties: {
              reservation: {
                oneOf: [{ type: 'null' }, reservationViewSchema],
                description: 'null while nobody holds the box.',
              },
            },
          },
          ...errorResponses(401, 404, 422),
          ...forbidden,
        },
      },
    },
    async (request) => ({ reservation: await reservations.view(Number(request.params.module_id)) }),
  );
}
