// POST /api/box_logs (spec 4.1): 401 without a valid token (checked before
// the body), 422 naming element and field (the body schema of validate.ts,
// run by fastify), 404 naming the id that does not exist, 413 over
// BODY_LIMIT_BYTES; a batch is all or nothing; 201 with
// {"box_logs": [{"id", "verified", "duplicate"}]} in request order.
import type { FastifyInstance } from 'fastify';
import { bearerAuth, type BearerDeps } from '../auth/index.js';
import { HttpBoxLogBatches } from './http-batches.js';
import type { BoxLogIngestDeps } from './ingest.js';
import { boxLogEntries, boxLogsBodySchema } from './validate.js';
import type { ApiConfig } from '../config/index.js';
import type { GroupCommit } from '../db/group-commit.js';
import { ApiError } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';

const DESCRIPTION = [
  'Body: `{"box_logs": [{"box_log": {...spec 2.1...}}, ...]}`, at most BOX_LOGS_MAX_BATCH (1,000) elements.',
  'Required in each box_log: fo_user_id (the authenticated user), smart_key_id (integer or null), equipment_id, secured_parking_id,',
  'type (in, out, control), offline, created_at (`YYYY-MM-DD HH:MM:SS`, UTC). Optional and nullable: command and response (standard padded base64),',
  'command_decrypted, response_decrypted, point_attributes ({latitude, longitude}). A log is verified when its response is a response frame whose tag',
  'verifies under the box key of equipment_id for its command; a verified response already stored is answered duplicate: true and stores nothing.',
].join(' ');

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

/** Bearer authentication, the batch bound, the group commit, and whatever
 * ingestion needs (declared by api/box-logs/ingest.ts). */
export type BoxLogRouteDeps = BearerDeps & {
  config: Pick<ApiConfig, 'boxLogsMaxBatch'>;
  groupCommit: Pick<GroupCommit, 'runShared'>;
} & BoxLogIngestDeps;

export function boxLogRoutes(instance: FastifyInstance, ctx: BoxLogRouteDeps): void {
  const app = typedRoutes(instance);
  const batches = new HttpBoxLogBatches(ctx);
  app.post(
    '/api/box_logs',
    {
      schema: {
        tags: ['box logs'],
        summary: 'Send box logs (spec 4.1)',
        description: DESCRIPTION,
        security: [{ bearer: [] }],
        body: boxLogsBodySchema(ctx.config.boxLogsMaxBatch),
        response: { 201: resultSchema, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
      onRequest: bearerAuth(ctx),
    },
    async (request, reply) => {
      if (!request.user) throw new ApiError('unauthorized');
      // The body passed its schema (422 naming each bad field otherwise, before this handler).
      const batch = { entries: boxLogEntries(request.body), userId: request.user.id };
      // Stored with the other batches of this turn (http-batches.ts); answered once committed.
      const answer = await ctx.groupCommit.runShared(batches, batch);
      if ('refused' in answer) throw answer.refused;
      return reply.status(201).send({ box_logs: answer.stored });
    },
  );
}
