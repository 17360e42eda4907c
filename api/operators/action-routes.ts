// POST /api/operator/smart_keys/:id/revoke and forwarding per parking: the
// services `admin smart-key revoke` and `admin forwarding status|retry` use.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import { revokeSmartKey } from '../control/index.js';
import type { Store } from '../db/store.js';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { forwardingStatus, reviveDeadDeliveries } from '../forwarding/index.js';
import type { SmartKeyRepository } from '../smart-keys/index.js';
import { errorResponses } from '../http/schemas.js';
import type { EventPublisher } from '../events/types.js';
import { typedRoutes } from '../http/typed-routes.js';
import { idParams } from './schemas.js';

/** The database the services write, the clock, the keys (an unknown id is a
 * 404), and the event stream (a revived parking's forwarding, the boxes a
 * revocation queued commands for). */
export interface OperatorActionRouteDeps {
  store: Store;
  clock: Clock;
  smartKeys: Pick<SmartKeyRepository, 'findById'>;
  events: Pick<EventPublisher, 'publishForwarding' | 'publishBox'>;
}

const errors = {
  ...errorResponses(401, 404, 422, 503),
  403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
};

const deliverySchema = {
  type: 'object',
  properties: {
    module_id: { type: 'integer' },
    kind: { type: 'string' },
    state: { type: 'string', enum: ['pending', 'done', 'failed', 'skipped'] },
    attempts: { type: 'integer' },
    last_status: { type: ['string', 'null'] },
    last_error: { type: ['string', 'null'] },
  },
} as const;

const revokeResponse = {
  type: 'object',
  required: ['smart_key_id', 'revoked_at', 'newly_revoked', 'operation', 'done', 'pending', 'failed', 'deliveries'],
  properties: {
    smart_key_id: { type: 'integer' },
    revoked_at: { type: 'string' },
    newly_revoked: { type: 'boolean', description: 'False when it was revoked before (nothing new queued).' },
    operation: { type: 'string' },
    done: { type: 'integer' },
    pending: { type: 'integer', description: 'REVOKE commands queued for boxes, not answered yet.' },
    failed: { type: 'integer' },
    skipped: { type: 'integer', description: 'Deliveries an operator gave up on.' },
    deliveries: { type: 'array', items: deliverySchema },
  },
} as const;

/** Exported for the bench page's contract test. */
export const forwardingStatusResponse = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      parking_id: { type: 'integer' },
      url: { type: 'string' },
      pending: { type: 'integer' },
      delivered: { type: 'integer' },
      dead: { type: 'integer' },
      last_error: { type: ['string', 'null'] },
      last_attempt_at: { type: ['string', 'null'] },
      disabled_at: { type: ['string', 'null'], description: 'When a 410 Gone disabled the URL; null when enabled.' },
    },
  },
} as const;

const revivalResponse = {
  type: 'object',
  properties: {
    parking_id: { type: 'integer' },
    revived_deliveries: { type: 'integer' },
    enabled_urls: { type: 'array', items: { type: 'string' } },
  },
} as const;

export function operatorActionRoutes(instance: FastifyInstance, ctx: OperatorActionRouteDeps): void {
  const app = typedRoutes(instance);
  app.post(
    '/smart_keys/:id/revoke',
    {
      config: refusalsAbout('id'),
      schema: {
        tags: ['operator'],
        summary: 'Revoke a smart key: refused by the service at once, a REVOKE queued for each box it opens',
        security: [{ operator: [] }],
        params: idParams,
        response: { 200: revokeResponse, ...errors },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      if (!(await ctx.smartKeys.findById(id)))
        throw new ApiError('resource_not_found', undefined, [{ path: 'id', message: `no smart key with id ${id}` }]);
      const operator = request.operator?.name ?? 'unknown';
      const result = await revokeSmartKey(ctx, id, ctx.clock.now(), `operator ${operator} (HTTP)`);
      // Their pending control commands changed.
      for (const delivery of result.deliveries) ctx.events.publishBox(delivery.module_id);
      return { ...result, revoked_at: new Date(result.revoked_at).toISOString() };
    },
  );

  app.get(
    '/parkings/:id/forwarding',
    {
      config: refusalsAbout('id'),
      schema: {
        tags: ['operator'],
        summary: "A parking's forwarding per URL: box logs pending, delivered, dead",
        security: [{ operator: [] }],
        params: idParams,
        response: { 200: forwardingStatusResponse, ...errors },
      },
    },
    (request) => forwardingStatus(ctx.store, Number(request.params.id)),
  );

  app.post(
    '/parkings/:id/forwarding/retry',
    {
      config: refusalsAbout('id'),
      schema: {
        tags: ['operator'],
        summary: "Retry a parking's dead deliveries now, and send again to URLs a 410 Gone disabled",
        security: [{ operator: [] }],
        params: idParams,
        response: { 200: revivalResponse, ...errors },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      const revival = await reviveDeadDeliveries(ctx.store, id, ctx.clock.now());
      ctx.events.publishForwarding(id);
      return revival;
    },
  );
}
