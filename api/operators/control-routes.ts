// GET /api/operator/control_commands and POST .../control_commands/:id/retry
// and /skip: the queue of REVOKE and SET_ISSUER deliveries, and what an
// operator does about one that is stuck (api/control/interventions.ts, as
// `admin control list|retry|skip`).
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import { type ControlState, intervene, type Intervention, listControlCommands } from '../control/index.js';
import type { Store } from '../db/store.js';
import { refusalsAbout } from '../http/error-handler.js';
import type { EventPublisher } from '../events/types.js';
import { errorResponses } from '../http/schemas.js';
import { idParams } from './schemas.js';
import { typedRoutes } from '../http/typed-routes.js';

export interface OperatorControlRouteDeps {
  store: Store;
  clock: Clock;
  events: Pick<EventPublisher, 'publishBox'>;
}

export const CONTROL_STATES: readonly ControlState[] = ['pending', 'done', 'failed', 'skipped'];
const LIST_LIMIT = 500;

const controlCommandSchema = {
  type: 'object',
  required: [
    'id',
    'module_id',
    'kind',
    'purpose',
    'operation',
    'state',
    'attempts',
    'control_seq',
    'last_status',
    'last_error',
    'requested_by',
    'created_at',
    'finished_at',
    'next_attempt_at',
    'waiting',
  ],
  properties: {
    id: { type: 'integer' },
    module_id: { type: 'integer' },
    kind: { type: 'string', enum: ['REVOKE', 'SET_ISSUER'] },
    purpose: { type: 'string', enum: ['revoke', 'set_access', 'rotate_install', 'rotate_drop', 'restore'] },
    operation: { type: 'string' },
    state: { type: 'string', enum: CONTROL_STATES },
    attempts: { type: 'integer' },
    control_seq: { type: ['integer', 'null'] },
    last_status: { type: ['string', 'null'] },
    last_error: { type: ['string', 'null'] },
    requested_by: { type: 'string' },
    created_at: { type: 'string' },
    finished_at: { type: ['string', 'null'] },
    next_attempt_at: { type: 'string' },
    waiting: {
      type: ['object', 'null'],
      description:
        'A pending command the dispatcher holds back: its box is reserved (reason names the holder, the note and the expiry; it goes out after the release, in order) or under a conformance run; until is when that ends unless renewed. null otherwise.',
      required: ['reason', 'until'],
      properties: { reason: { type: 'string' }, until: { type: 'string' } },
    },
  },
} as const;

const errors = {
  ...errorResponses(401, 404, 409, 422),
  403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
};

const SUMMARIES: Record<Intervention, string> = {
  retry:
    'Send a control command again: a failed one goes back to the queue, a pending one goes out at the next poll; 409 when it is done or skipped',
  skip: 'Give up on a control command: skipped, its operation goes on without it (a rotation takes its step if it was the last); 409 when it is done',
};

export function operatorControlRoutes(instance: FastifyInstance, ctx: OperatorControlRouteDeps): void {
  const app = typedRoutes(instance);
  app.get(
    '/control_commands',
    {
      schema: {
        tags: ['operator'],
        summary: `Control commands (REVOKE, SET_ISSUER), newest first, at most ${LIST_LIMIT}`,
        security: [{ operator: [] }],
        querystring: {
          type: 'object',
          properties: {
            box: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$', maxLength: 10 },
            state: { type: 'string', enum: CONTROL_STATES },
          },
        },
        response: { 200: { type: 'array', items: controlCommandSchema }, ...errors },
      },
    },
    (request) =>
      listControlCommands(
        ctx.store,
        {
          limit: LIST_LIMIT,
          ...(request.query.box === undefined ? {} : { moduleId: Number(request.query.box) }),
          ...(request.query.state === undefined ? {} : { state: request.query.state }),
        },
        ctx.clock.now(),
      ),
  );

  for (const intervention of ['retry', 'skip'] as const) {
    app.post(
      `/control_commands/:id/${intervention}`,
      {
        config: refusalsAbout('id'),
        schema: {
          tags: ['operator'],
          summary: SUMMARIES[intervention],
          security: [{ operator: [] }],
          params: idParams,
          response: { 200: controlCommandSchema, ...errors },
        },
      },
      async (request) => {
        const operator = request.operator?.name ?? 'unknown';
        const command = await intervene(
          ctx.store,
          Number(request.params.id),
          intervention,
          ctx.clock.now(),
          `operator ${operator} (HTTP)`,
        );
        ctx.events.publishBox(command.module_id);
        return command;
      },
    );
  }
}
