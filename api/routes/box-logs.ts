// POST /api/box_logs (spec 4.1): 401 without a valid token (checked before
// the body), 422 naming element and field, 404 naming the id that does not
// exist, 413 over BODY_LIMIT_BYTES; a batch is all or nothing; 201 with
// {"box_logs": [{"id", "verified", "duplicate"}]} in request order.
import type { FastifyInstance } from 'fastify';
import { bearerAuth } from '../auth/bearer.js';
import { ingestBoxLogs } from '../box-logs/ingest.js';
import { validateBoxLogsBody } from '../box-logs/validate.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { errorResponses } from '../schemas.js';

const DESCRIPTION = [
  'Body: `{"box_logs": [{"box_log": {...spec 2.1...}}, ...]}`, at most BOX_LOGS_MAX_BATCH (1,000) elements.',
  'Required in each box_log: fo_user_id (the authenticated user), smart_key_id (integer or null), equipment_id, secured_parking_id,',
  'type (in, out, control), offline, created_at (`YYYY-MM-DD HH:MM:SS`, UTC). Optional and nullable: command and response (standard padded base64),',
  'command_decrypted, response_decrypted, point_attributes ({latitude, longitude}). A log is verified when its response is a response frame whose tag',
  'verifies under the box key of equipment_id for its command; a verified response already stored is answered duplicate: true and stores nothing.',
].join(' ');

/** The body as OpenAPI shows it (spec 2.1). The route checks it itself
 * (validate.ts: exact paths, all details at once, no schema cost per log). */
const bodySchema = {
  type: 'object',
  required: ['box_logs'],
  properties: {
    box_logs: {
      type: 'array',
      items: {
        type: 'object',
        required: ['box_log'],
        properties: {
          box_log: {
            type: 'object',
            required: ['fo_user_id', 'smart_key_id', 'equipment_id', 'secured_parking_id', 'type', 'offline', 'created_at'],
            properties: {
              fo_user_id: { type: 'integer', description: 'The authenticated user.' },
              smart_key_id: { type: ['integer', 'null'] },
              equipment_id: { type: 'integer', description: 'The box\'s module id.' },
              secured_parking_id: { type: 'integer' },
              type: { type: 'string', enum: ['in', 'out', 'control'] },
              command: { type: ['string', 'null'], description: 'Base64 of the command frame.' },
              command_decrypted: { type: ['string', 'null'] },
              response: { type: ['string', 'null'], description: 'Base64 of the response frame.' },
              response_decrypted: { type: ['string', 'null'] },
              offline: { type: 'boolean' },
              created_at: { type: 'string', description: 'YYYY-MM-DD HH:MM:SS, UTC.' },
              point_attributes: {
                type: ['object', 'null'],
                properties: { latitude: { type: 'number', minimum: -90, maximum: 90 }, longitude: { type: 'number', minimum: -180, maximum: 180 } },
              },
            },
          },
        },
      },
    },
  },
} as const;

const resultSchema = {
  type: 'object',
  required: ['box_logs'],
  properties: {
    box_logs: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'verified', 'duplicate'],
        properties: {
          id: { type: 'integer', description: 'The stored box log (for a duplicate, the one stored before).' },
          verified: { type: 'boolean' },
          duplicate: { type: 'boolean' },
        },
      },
    },
  },
} as const;

export function boxLogRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post(
    '/api/box_logs',
    {
      schema: {
        tags: ['box logs'],
        summary: 'Send box logs (spec 4.1)',
        description: DESCRIPTION,
        security: [{ bearer: [] }],
        body: bodySchema,
        response: { 201: resultSchema, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
      // The schema documents; validate.ts validates.
      validatorCompiler: () => () => true,
      onRequest: bearerAuth(ctx),
    },
    async (request, reply) => {
      if (!request.user) throw new ApiError('unauthorized');
      const validated = validateBoxLogsBody(request.body, ctx.config.boxLogsMaxBatch);
      if (!validated.ok) throw new ApiError('validation_failed', undefined, validated.details);
      const userId = request.user.id;
      // Shares a transaction with the other batches of this turn (group-commit.ts); answered once committed.
      const results = await ctx.groupCommit.run(() => ingestBoxLogs(ctx, validated.entries, { source: 'http', userId }));
      return reply.status(201).send({ box_logs: results });
    },
  );
}
