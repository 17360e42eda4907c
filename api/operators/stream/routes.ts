// The operator's live event stream (the contract: docs/api.md "Event stream"):
//   POST /api/operator/events/tickets (operator bearer) -> 201 {ticket, expires_at}
//   GET  /api/operator/events  text/event-stream (@fastify/sse), with either
//        ?ticket=T (single use, 30 s: browsers, whose EventSource cannot set
//        headers) or Authorization: Bearer <operator token> (curl, scripts).
// First a snapshot, then deltas coalesced per client (api/events/stream.ts);
// a client resuming with Last-Event-ID (or ?last_event_id=N, for a new
// EventSource) within the replay window gets every event it missed. The
// stream ends when its operator is removed or its token replaced, by any
// process on the database (api/events/owners.ts).
// The ticket never reaches a log line: the request logger prints the URL
// with `ticket=` redacted (api/log-redaction.ts, used by the process's logger, api/app-logger.ts).
import { fastifySSE } from '@fastify/sse';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../lib/clock.js';
import type { ApiConfig } from '../../config/index.js';
import { ApiError } from '../../http/errors.js';
import type { EventStream, StreamSink } from './stream.js';
import { TICKET_PATTERN, type EventTicketRepository } from './tickets.js';
import { errorResponses } from '../../http/schemas.js';
import { typedRoutes } from '../../http/typed-routes.js';

/** What the stream routes use. */
export interface OperatorEventRouteDeps {
  clock: Pick<Clock, 'now'>;
  config: Pick<ApiConfig, 'httpConnectionTimeoutMs'>;
  eventStream: Pick<EventStream, 'add' | 'close' | 'counters'>;
  eventTickets: Pick<EventTicketRepository, 'issue' | 'take'>;
}

const TICKET = new RegExp(TICKET_PATTERN);
/** An event id we may have sent: decimal, at most 16 digits (ids are below 2^53). */
const EVENT_ID = /^[0-9]{1,16}$/;

const errors = {
  ...errorResponses(422),
  401: {
    $ref: 'ErrorBody#',
    description:
      'unauthorized / invalid_token (no or a bad bearer token), invalid_ticket (a missing, unknown, used or expired ticket).',
  },
  403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
};

/** The @fastify/sse serializer: our messages' data is JSON text already (serialized once for every client). */
const passThrough = (data: unknown): string => (typeof data === 'string' ? data : JSON.stringify(data));

export async function operatorEventRoutes(instance: FastifyInstance, ctx: OperatorEventRouteDeps): Promise<void> {
  const scope = typedRoutes(instance);
  // Heartbeat comments under the server's idle timeout (HTTP_CONNECTION_TIMEOUT_MS), so a quiet stream stays open.
  await scope.register(fastifySSE, {
    heartbeatInterval: Math.max(1_000, Math.floor(ctx.config.httpConnectionTimeoutMs / 2)),
  });
  const stream = ctx.eventStream;
  // Before the server waits for its connections: every stream ends.
  scope.addHook('preClose', (done) => {
    stream.close();
    scope.log.info({ component: 'api:events', ...stream.counters }, 'event stream closed');
    done();
  });

  scope.post(
    '/events/tickets',
    {
      schema: {
        tags: ['operator'],
        summary: 'A single-use ticket for GET /api/operator/events (an EventSource cannot send Authorization)',
        security: [{ operator: [] }],
        response: {
          201: {
            type: 'object',
            required: ['ticket', 'expires_at'],
            properties: {
              ticket: { type: 'string', description: '32 random bytes, base64url: good for ONE stream within 30 s.' },
              expires_at: { type: 'string' },
            },
          },
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const operator = request.operator;
      if (operator === null) throw new ApiError('unauthorized');
      const issued = await ctx.eventTickets.issue(operator.id, ctx.clock.now());
      return reply.status(201).send({ ticket: issued.ticket, expires_at: new Date(issued.expiresAt).toISOString() });
    },
  );

  scope.get(
    '/events',
    {
      sse: { kind: 'only', serializer: passThrough },
      config: { operatorTicket: true },
      schema: {
        tags: ['operator'],
        summary: 'The live event stream (Server-Sent Events): a snapshot, then deltas',
        description:
          'Authenticate with `ticket` (POST /api/operator/events/tickets; single use, 30 s) or an operator bearer token. Resume with the Last-Event-ID header or `last_event_id`. See docs/api.md, Event stream.',
        security: [{ operator: [] }],
        querystring: {
          type: 'object',
          properties: {
            ticket: { type: 'string', maxLength: 200, description: 'A ticket of POST /api/operator/events/tickets.' },
            last_event_id: {
              type: 'string',
              pattern: EVENT_ID.source,
              description:
                'The id of the last message received (as Last-Event-ID, which a new EventSource cannot send).',
            },
          },
        },
        response: errors,
      },
    },
    async (request, reply) => {
      const { ticket } = request.query;
      if (ticket !== undefined) {
        const operator = TICKET.test(ticket) ? await ctx.eventTickets.take(ticket, ctx.clock.now()) : undefined;
        if (operator === undefined) throw new ApiError('invalid_ticket');
        request.operator = operator;
      }
      const operator = request.operator;
      if (operator === null) throw new ApiError('unauthorized');
      const header = reply.sse.lastEventId;
      const resumeFrom = header !== null && EVENT_ID.test(header) ? header : request.query.last_event_id;
      reply.sse.keepAlive();
      // Committed as a stream now: its first message (the snapshot) is read
      // from the store after the handler returns.
      reply.sse.sendHeaders();
      const sse = reply.sse;
      const raw = reply.raw;
      const sink: StreamSink = {
        send: (message) => {
          if (sse.isConnected) sse.send(message).catch(() => undefined); // a closed connection: onClose removes it
        },
        get congested() {
          return raw.writableNeedDrain;
        },
        get bufferedBytes() {
          return raw.writableLength;
        },
        close: () => sse.close(),
        drop: () => raw.destroy(),
      };
      const owner = { operatorId: operator.id, tokenHash: operator.tokenHash };
      const remove = stream.add(sink, resumeFrom === undefined ? undefined : Number(resumeFrom), owner);
      sse.onClose(remove);
    },
  );
}
