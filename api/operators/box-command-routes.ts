// POST /api/operator/boxes/:module_id/commands: a one-off command sent to the
// box through the service's MQTT side (api/service.ts), the answer awaited as the
// open route does, stored as a box log by ingestion: BATTERY_QUERY, TIME_SET,
// a status request (a BATTERY_QUERY read as the box's state) or an operator
// ACCESS (api/operators/operator-access.ts: its box log is that of the
// operator's smart key). The event stream hears of it as the dispatcher's
// commands: a `control` delivery when it is sent and when it is answered (or
// not), and the box's entry anew.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ApiConfig } from '../config/index.js';
import type { Store } from '../db/store.js';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import type { ControlDelivery, EventPublisher } from '../events/types.js';
import type { MqttService } from '../mqtt/index.js';
import { BOX_COMMANDS, prepareBoxCommand, type BoxCommand } from './box-commands.js';
import { errorResponses } from '../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import { barrierName, isProtocolError, parseResponse, statusName } from '../../firmware-protocol/index.js';
import { typedRoutes } from '../http/typed-routes.js';
import { BOX_RESERVED_409, guardReservation } from '../reservations/index.js';

/** The database (the box, its control sequence), the clock (TIME_SET), the
 * answer timeout, the event stream (control deliveries, the box anew). */
export interface OperatorBoxCommandRouteDeps {
  store: Store;
  clock: Clock;
  config: Pick<ApiConfig, 'boxAnswerTimeoutMs'>;
  events: Pick<EventPublisher, 'publishControl' | 'publishBox'>;
}

/** The protocol kind each command sends (docs/protocol.md): `status` is a BATTERY_QUERY. */
const KIND_OF: Record<BoxCommand, string> = {
  battery_query: 'BATTERY_QUERY',
  status: 'BATTERY_QUERY',
  time_set: 'TIME_SET',
  access: 'ACCESS',
};

/** A box's module id in the path: canonical decimal, a u32. */
export const moduleIdParams = {
  type: 'object',
  required: ['module_id'],
  properties: { module_id: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$' } },
} as const;

const answerSchema = {
  type: 'object',
  required: [
    'module_id',
    'command',
    'verified',
    'status',
    'battery_mv',
    'barrier',
    'box_seq',
    'box_time',
    'box_time_drift_seconds',
    'smart_key_id',
    'response',
    'box_log_id',
  ],
  properties: {
    module_id: { type: 'integer' },
    command: { type: 'string', enum: BOX_COMMANDS },
    verified: { type: 'boolean', description: "The response's tag checked under the box key." },
    status: { type: ['string', 'null'], description: 'docs/protocol.md status name; null when not verified.' },
    battery_mv: { type: ['integer', 'null'] },
    barrier: {
      type: ['string', 'null'],
      description: 'closed, opening, open, closing or fault; null when not verified.',
    },
    box_seq: { type: ['integer', 'null'], description: "The response's box_seq; null when not verified." },
    box_time: {
      type: ['string', 'null'],
      description: "The box's clock when it answered (ISO 8601); null when not verified.",
    },
    box_time_drift_seconds: {
      type: ['integer', 'null'],
      description: "The box's clock minus the service's when the answer came, seconds; null when not verified.",
    },
    smart_key_id: {
      type: ['integer', 'null'],
      description:
        "access: the operator's smart key (purpose operator) the ACCESS carried; null for the other commands.",
    },
    response: { type: 'string', description: 'The response frame, base64.' },
    box_log_id: { type: ['integer', 'null'] },
  },
} as const;

export function operatorBoxCommandRoutes(
  instance: FastifyInstance,
  ctx: OperatorBoxCommandRouteDeps,
  mqtt: MqttService | undefined,
): void {
  const app = typedRoutes(instance);
  app.post(
    '/boxes/:module_id/commands',
    {
      config: refusalsAbout('module_id'),
      schema: {
        tags: ['operator'],
        summary:
          "Send a box a BATTERY_QUERY, a TIME_SET (the service's time), a status request or an operator ACCESS through MQTT and return its answer",
        description:
          "status is a BATTERY_QUERY whose answer is read as the box's state: the protocol has no other status command (every response carries barrier, battery, box time and box_seq). access mints a smart key of purpose operator naming the operator (that box only, one try, 60 s), sends its ACCESS (sealed or signed as the parking's mode says) and returns the box's answer, stored as a box log of that key.",
        security: [{ operator: [] }],
        params: moduleIdParams,
        body: {
          type: 'object',
          required: ['command'],
          properties: { command: { type: 'string', enum: BOX_COMMANDS } },
        },
        response: {
          200: answerSchema,
          ...errorResponses(400, 401, 404, 415, 422),
          403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
          409: {
            $ref: 'ErrorBody#',
            description: `operation_refused: battery_query, time_set or status to a box a conformance run holds (the message names the run; cancel it or wait for its end), or to a box that has used every control sequence. ${BOX_RESERVED_409}`,
          },
          503: { $ref: 'ErrorBody#', description: 'mqtt_unavailable: no MQTT broker connected.' },
          504: { $ref: 'ErrorBody#', description: 'box_timeout: the box did not answer in BOX_ANSWER_TIMEOUT_MS.' },
        },
      },
    },
    async (request) => {
      const moduleId = Number(request.params.module_id);
      const { command } = request.body;
      if (mqtt === undefined) throw new ApiError('mqtt_unavailable');
      const operator = request.operator;
      if (operator === null) throw new ApiError('unauthorized');
      await guardReservation(ctx, moduleId, request);
      const { frame, smartKeyId } = await prepareBoxCommand(ctx, ctx.clock, moduleId, command, operator);
      const context = smartKeyId === null ? {} : { smart_key_id: smartKeyId };
      const tell = deliveryTeller(ctx, moduleId, command);
      tell('sent', null);
      const outcome = await mqtt.sendCommand(moduleId, frame, context, ctx.config.boxAnswerTimeoutMs);
      if ('error' in outcome) {
        tell(outcome.error === 'timeout' ? 'unanswered' : 'failed', null);
        throw new ApiError(outcome.error === 'timeout' ? 'box_timeout' : 'mqtt_unavailable');
      }
      const { answered } = outcome;
      if (answered.response === null) {
        tell('unanswered', null);
        throw new ApiError('box_timeout', `The box did not answer (${answered.error ?? 'no response'}).`);
      }
      const verified = answered.log?.verified === true;
      let fields: ReturnType<typeof parseResponse> | undefined;
      try {
        fields = verified ? parseResponse(Buffer.from(answered.response, 'base64')) : undefined;
      } catch (error) {
        if (!isProtocolError(error)) throw error;
      }
      const status = fields ? (statusName(fields.status) ?? null) : null;
      tell('answered', status);
      return {
        module_id: moduleId,
        command,
        verified,
        status,
        battery_mv: fields ? fields.batteryMv : null,
        barrier: fields ? (barrierName(fields.barrier)?.toLowerCase() ?? null) : null,
        box_seq: fields ? fields.boxSeq : null,
        box_time: fields ? new Date(fields.boxTime * 1000).toISOString() : null,
        box_time_drift_seconds: fields ? fields.boxTime - Math.floor(ctx.clock.now() / 1000) : null,
        smart_key_id: smartKeyId,
        response: answered.response,
        box_log_id: answered.log?.id ?? null,
      };
    },
  );
}

/** Tells the event stream of one command's delivery, as the control
 * dispatcher tells of its own: a `control` delivery (operation_id
 * `operator:<command>:<uuid>`, one per request) and the box's entry anew
 * (its pending commands, last response, battery). */
function deliveryTeller(
  ctx: Pick<OperatorBoxCommandRouteDeps, 'events' | 'clock'>,
  moduleId: number,
  command: BoxCommand,
): (outcome: 'sent' | 'answered' | 'unanswered' | 'failed', status: string | null) => void {
  const operationId = `operator:${command}:${randomUUID()}`;
  return (outcome, status) => {
    const delivery: ControlDelivery = {
      module_id: moduleId,
      operation_id: operationId,
      kind: KIND_OF[command],
      outcome,
      status,
      at: new Date(ctx.clock.now()).toISOString(),
    };
    ctx.events.publishControl(delivery);
    ctx.events.publishBox(moduleId);
  };
}
