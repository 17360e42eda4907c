// POST /api/operator/boxes/:module_id/sim: an operator's `sim/set` (faults and
// settings of a simulated box, docs/bench.md) checked with the simulator's own
// parser (lib/sim-set.ts) and published on `parkbench/boxes/{id}/sim/set`
// through the API's MQTT side. 202: the broker took it; a simulated box
// applies it (its published state shows it), a real box never subscribes.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/open.js';
import { ApiError } from '../../errors.js';
import type { MqttService } from '../../mqtt/mqtt-service.js';
import { BoxesSqlite } from '../../repositories/boxes.js';
import { errorResponses } from '../../schemas.js';
import { parseSimSet, SimSetError, simSetFields } from '../../../lib/sim-set.js';
import { moduleIdParams } from './box-commands.js';

/** The database (the box must be one of ours). */
export interface OperatorBoxSimRouteDeps {
  db: Db;
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
};

export function operatorBoxSimRoutes(
  app: FastifyInstance,
  ctx: OperatorBoxSimRouteDeps,
  mqtt: () => MqttService | undefined,
): void {
  const boxes = new BoxesSqlite(ctx.db);
  app.post<{ Params: { module_id: string }; Body: Record<string, unknown> }>(
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
      if (!boxes.findByModuleId(moduleId))
        throw new ApiError('resource_not_found', undefined, [
          { path: 'module_id', message: `no box with module id ${moduleId}` },
        ]);
      const service = mqtt();
      if (service === undefined || !(await service.publishSimSet(moduleId, settings)))
        throw new ApiError('mqtt_unavailable');
      return reply.status(202).send({ module_id: moduleId, published: settings });
    },
  );
}
