// POST /api/operator/boxes/:module_id/sim: an operator's `sim/set` (faults and
// settings of a simulated box, docs/bench.md) checked with the simulator's own
// parser (lib/sim-set.ts) and published on `parkbench/boxes/{id}/sim/set`
// through the API's MQTT side. 202: the broker took it; a simulated box
// applies it (its published state shows it), a real box never subscribes.
// 502 when the broker refused it (an external broker's ACL): an error, not
// a 202, since nothing reaches the box.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { CompiledOnce, type Store } from '../db/store.js';
import { ApiError } from '../http/errors.js';
import type { MqttService } from '../mqtt/index.js';
import { errorResponses } from '../http/schemas.js';
import { parseSimSet, SimSetError, simSetFields } from '../../lib/sim-set.js';
import { moduleIdParams } from './box-command-routes.js';
import { typedRoutes } from '../http/typed-routes.js';
import type { Clock } from '../../lib/clock.js';
import { BOX_RESERVED_409, guardReservation } from '../reservations/index.js';

/** The store (the box must be one of ours, and not reserved by another) and the clock (reservations' expiry). */
export interface OperatorBoxSimRouteDeps {
  store: Store;
  clock: Clock;
}

/** What each field does (docs/bench.md, Simulated boxes). No types here: the
 * one parser checks them (lib/sim-set.ts), so the API says what the
 * simulator would. */
const FIELD_DESCRIPTIONS: Record<string, string> = {
  drop_commands: 'Share of commands ignored, 0..1.',
  corrupt_responses: 'Share of responses sent with one byte flipped, 0..1.',
  delay_ms: 'Extra delay before every answer, ms (0..600000).',
  jam: 'true: the arm does not move, an ACCESS answers BARRIER_FAULT.',
  battery_mv: "The battery level, mV (below the box's min_battery_mv, 3300 by default, an ACCESS answers LOW_BATTERY).",
  clock_offset_seconds: 'The box clock this far from true time, s (positive: ahead).',
  drift_ppm: 'Clock drift, ppm.',
  offline_seconds: 'Drop off the network now and come back after this long, s.',
  car_passed: 'true: a car drives through now.',
};

const simSetSchema = {
  type: 'object',
  description: 'A sim/set: any of these; an unknown or bad field is 422 naming it.',
  properties: Object.fromEntries(simSetFields.map((name) => [name, { description: FIELD_DESCRIPTIONS[name] ?? name }])),
} as const;

export function operatorBoxSimRoutes(
  instance: FastifyInstance,
  ctx: OperatorBoxSimRouteDeps,
  mqtt: MqttService | undefined,
): void {
  const app = typedRoutes(instance);
  // Whether the box is ours (PARKINGS owns the boxes' repository: a small query of ours), compiled once.
  const { kysely } = ctx.store;
  const boxExists = new CompiledOnce(
    kysely
      .selectFrom('boxes')
      .select(sql<number>`1`.as('one'))
      .where('module_id', '=', 0),
  );
  app.post(
    '/boxes/:module_id/sim',
    {
      schema: {
        tags: ['operator'],
        summary: "Set a simulated box's faults and settings (publishes a sim/set on its MQTT topic)",
        security: [{ operator: [] }],
        params: moduleIdParams,
        body: simSetSchema,
        response: {
          202: {
            type: 'object',
            required: ['module_id', 'published'],
            properties: {
              module_id: { type: 'integer' },
              published: { ...simSetSchema, description: 'The sim/set published, as sent.' },
            },
          },
          ...errorResponses(400, 401, 404, 415, 422),
          403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
          409: { $ref: 'ErrorBody#', description: BOX_RESERVED_409 },
          502: {
            $ref: 'ErrorBody#',
            description:
              'mqtt_publish_refused: the broker refused the publish (an MQTT 5 PUBACK reason code of 0x80 or more, such as 0x87 Not authorized from its ACL); details name the topic and the reason.',
          },
          503: { $ref: 'ErrorBody#', description: 'mqtt_unavailable: no MQTT broker connected.' },
        },
      },
    },
    async (request, reply) => {
      const moduleId = Number(request.params.module_id);
      const settings = request.body;
      try {
        parseSimSet(settings);
      } catch (error) {
        if (!(error instanceof SimSetError)) throw error;
        throw new ApiError('validation_failed', undefined, [{ path: error.field, message: error.reason }]);
      }
      if ((await boxExists.run(kysely, [moduleId])).length === 0)
        throw new ApiError('resource_not_found', undefined, [
          { path: 'module_id', message: `no box with module id ${moduleId}` },
        ]);
      await guardReservation(ctx, moduleId, request);
      if (mqtt === undefined) throw new ApiError('mqtt_unavailable');
      const published = await mqtt.publishSimSet(moduleId, settings);
      if (published.outcome === 'not_sent') throw new ApiError('mqtt_unavailable');
      if (published.outcome === 'refused')
        throw new ApiError('mqtt_publish_refused', undefined, [
          { path: 'topic', message: `the broker refused the publish on ${published.topic}: ${published.reason}` },
        ]);
      return reply.status(202).send({ module_id: moduleId, published: settings });
    },
  );
}
