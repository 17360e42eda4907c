// POST /api/car_driver/smart_keys/:id/open: for parkings with
// is_online true the phone does not talk to the box; the server publishes
// the key's access command on the box's command topic and answers with the
// box's response (stored as a box log like any other), or 504 when the box
// does not answer within BOX_ANSWER_TIMEOUT_MS. Only a verified response is
// read: bytes that are no response frame are 502, and a frame whose
// tag does not verify answers null status and remaining, as nothing in it can
// be believed.
import type { FastifyInstance } from 'fastify';
import { isProtocolError, parseResponse, statusName, type ParsedResponse } from '../../firmware-protocol/index.js';
import { bearerAuth, type BearerDeps } from '../auth/index.js';
import type { ApiConfig } from '../config/index.js';
import { ApiError } from '../http/errors.js';
import type { BoxCommandSender } from '../boxes/index.js';
import type { ParkingRepository } from '../parkings/index.js';
import type { SmartKeyRepository } from './repository.js';
import { errorResponses } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';

const openResponseSchema = {
  type: 'object',
  required: ['module_id', 'status', 'status_code', 'response', 'verified', 'box_log_id'],
  properties: {
    module_id: { type: 'integer', description: 'The box that answered.' },
    status: {
      type: ['string', 'null'],
      description:
        'The docs/protocol.md status name: OK when the barrier opens. Null when the response is not verified.',
    },
    status_code: { type: ['integer', 'null'], description: 'The status byte; null when the response is not verified.' },
    remaining: {
      type: ['integer', 'null'],
      description: 'Tries of this key left in this direction (null: not applicable, or the response is not verified).',
    },
    response: { type: 'string', description: 'Base64 of the response frame.' },
    verified: { type: 'boolean', description: 'The response tag verified under the box key.' },
    box_log_id: { type: ['integer', 'null'], description: 'The box log the response was stored as.' },
  },
} as const;

/** The key and its parking to check, the answer timeout, and bearer authentication. */
export interface OpenSmartKeyRouteDeps extends BearerDeps {
  config: Pick<ApiConfig, 'boxAnswerTimeoutMs'>;
  smartKeys: Pick<SmartKeyRepository, 'findById'>;
  parkings: Pick<ParkingRepository, 'findById'>;
}

export function openSmartKeyRoutes(
  instance: FastifyInstance,
  ctx: OpenSmartKeyRouteDeps,
  mqtt: BoxCommandSender | undefined,
): void {
  const app = typedRoutes(instance);
  app.post(
    '/api/car_driver/smart_keys/:id/open',
    {
      schema: {
        tags: ['smart keys'],
        summary: 'Open a box with a smart key of an online parking (the server sends the command)',
        description:
          "For parkings with is_online true. 403 `smart_key_revoked` for a key an operator revoked. Publishes the key's access_command to the box's MQTT command topic and answers with the box's response, stored as a box log. 422 for a key of a parking that is not online or a box that is not an access point of the key; 504 when the box does not answer in time; 503 when no MQTT broker is connected; 502 `bad_box_response` when the box answers bytes that are no response frame. A response whose tag does not verify is a 200 with verified false and status, status_code and remaining null.",
        security: [{ bearer: [] }],
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', description: 'The smart key id; anything else is 404.' } },
        },
        body: {
          type: 'object',
          required: ['module_id'],
          properties: {
            module_id: {
              type: 'integer',
              minimum: 0,
              maximum: 4_294_967_295,
              description: 'The box (access point) to open.',
            },
          },
        },
        response: {
          200: openResponseSchema,
          ...errorResponses(400, 401, 404, 422),
          403: { $ref: 'ErrorBody#', description: 'smart_key_revoked: an operator revoked the key.' },
          502: {
            $ref: 'ErrorBody#',
            description: 'bad_box_response: the box answered bytes that are no response frame.',
          },
          503: {
            $ref: 'ErrorBody#',
            description: 'mqtt_unavailable: no MQTT broker connected; or database_busy, with Retry-After.',
          },
          504: { $ref: 'ErrorBody#' },
        },
      },
      onRequest: bearerAuth(ctx),
    },
    async (request) => {
      const user = request.user;
      if (!user) throw new ApiError('unauthorized');
      const raw = request.params.id;
      const key = /^[0-9]{1,15}$/.test(raw) ? await ctx.smartKeys.findById(Number(raw)) : undefined;
      if (key?.user_id !== user.id)
        throw new ApiError('resource_not_found', undefined, [
          { path: 'id', message: `no smart key ${raw.slice(0, 40)} of this driver` },
        ]);
      // Refused before anything is sent: the service stops a revoked key at once.
      if (key.revoked_at !== null)
        throw new ApiError('smart_key_revoked', undefined, [
          { path: 'id', message: `smart key ${key.id} was revoked` },
        ]);
      const parking = await ctx.parkings.findById(key.parking_id);
      if (parking?.is_online !== 1)
        throw new ApiError('parking_not_online', undefined, [
          { path: 'id', message: 'send access_command to the box over BLE instead' },
        ]);
      const moduleId = request.body.module_id;
      if (!(JSON.parse(key.module_ids) as number[]).includes(moduleId)) {
        throw new ApiError('validation_failed', undefined, [
          { path: 'module_id', message: 'is not an access point of this smart key' },
        ]);
      }
      if (mqtt === undefined) throw new ApiError('mqtt_unavailable');
      const outcome = await mqtt.sendCommand(
        moduleId,
        key.access_command,
        { fo_user_id: user.id, smart_key_id: key.id },
        ctx.config.boxAnswerTimeoutMs,
      );
      if ('error' in outcome) throw new ApiError(outcome.error === 'timeout' ? 'box_timeout' : 'mqtt_unavailable');
      const { answered } = outcome;
      if (answered.response === null)
        throw new ApiError('box_timeout', `The box did not answer (${answered.error ?? 'no response'}).`);
      const fields = responseFrame(Buffer.from(answered.response, 'base64'));
      // A duplicate is a verified response stored before (log.verified is true then).
      const verified = answered.log?.verified === true;
      return {
        module_id: moduleId,
        status: verified ? (statusName(fields.status) ?? `0x${fields.status.toString(16)}`) : null,
        status_code: verified ? fields.status : null,
        remaining: verified && fields.remaining !== 0xff ? fields.remaining : null,
        response: answered.response,
        verified,
        box_log_id: answered.log?.id ?? null,
      };
    },
  );
}

/** The box's answer as a response frame; 502 bad_box_response when it is none
 * (its log is stored all the same, unverified). */
function responseFrame(bytes: Buffer): ParsedResponse {
  try {
    return parseResponse(bytes);
  } catch (error) {
    if (!isProtocolError(error)) throw error;
    throw new ApiError('bad_box_response', undefined, [
      { path: 'response', message: `${error.code}: ${error.message}` },
    ]);
  }
}
