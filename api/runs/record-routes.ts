// Recording a run from the command line: POST /api/operator/runs starts it
// (`started_by` the operator who asks, never the body), POST
// /runs/{id}/results appends its results as they end, POST /runs/{id}/end
// ends it with its summary and report. Only the operator who started a run
// adds to it: another gets 404, as if it did not exist; a run that has
// ended takes nothing more (409).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';
import type { NewResult } from './repository.js';
import type { Runs } from './runs.js';
import {
  forbidden,
  labelsBodySchema,
  MAX_CAPTURE_PATH,
  MAX_CAPTURES,
  MAX_ERROR,
  MAX_RESULTS_PER_CALL,
  resultInputSchema,
  runIdParams,
  runSchema,
  runWithResultsSchema,
} from './schemas.js';
import { ENDED_STATES, RUN_KINDS } from './view.js';

export interface RunRecordRouteDeps {
  runs: Runs;
  /** Called first in POST /runs: refuses (throws) when the box is reserved
   * by someone else and the request does not carry the reservation's token. */
  checkReservation?: (moduleId: number, request: FastifyRequest) => Promise<void>;
}

/** Targets a run reaches its box by. */
export const RUN_TARGETS = ['mqtt', 'serial', 'ble'] as const;

/** How far ahead of the service's clock a posted started_at may be (clocks differ), ms. */
const STARTED_AHEAD_MS = 24 * 3_600_000;

const runIdError = refusalsAbout('id');

function operatorName(request: FastifyRequest): string {
  const name = request.operator?.name;
  if (name === undefined) throw new ApiError('unauthorized');
  return name;
}

/** started_at as ms: an ISO time from 2000 on and at most a day ahead; a 422 naming it otherwise. */
function startedMsOf(text: string | undefined, nowMs: number): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || ms < Date.UTC(2000, 0, 1) || ms > nowMs + STARTED_AHEAD_MS)
    throw new ApiError('validation_failed', undefined, [
      { path: 'started_at', message: 'must be an ISO time (such as 2026-06-01T08:00:00.000Z), at most a day ahead' },
    ]);
  return ms;
}

const conflictOnEnded = {
  409: { $ref: 'ErrorBody#', description: 'operation_refused: the run has ended.' },
} as const;

export function runRecordRoutes(instance: FastifyInstance, deps: RunRecordRouteDeps, nowMs: () => number): void {
  const app = typedRoutes(instance);
  const { runs } = deps;

  app.post(
    '/runs',
    {
      config: refusalsAbout('module_id'),
      schema: {
        tags: ['operator'],
        summary: 'Start recording a run of the command line (conformance or soak); its results and end follow',
        description:
          "`parkbench conformance --record` and `parkbench soak --record` post this, then POST /api/operator/runs/{id}/results as results end and POST /api/operator/runs/{id}/end. `started_by` is the operator of the token. Refused with 409 box_reserved while another holds the box's reservation (send its token in Parkbench-Reservation).",
        security: [{ operator: [] }],
        body: {
          type: 'object',
          required: ['module_id', 'kind', 'source', 'target'],
          additionalProperties: false,
          properties: {
            module_id: { type: 'integer', minimum: 0, maximum: 4_294_967_295 },
            kind: { type: 'string', enum: RUN_KINDS },
            source: { type: 'string', enum: ['cli', 'ci'], description: 'ci when run by a CI job, else cli.' },
            target: { type: 'string', enum: RUN_TARGETS },
            labels: labelsBodySchema,
            options: { type: 'object', additionalProperties: true, description: 'As the kind writes them.' },
            started_at: { type: 'string', maxLength: 40, description: 'ISO time; now when absent.' },
          },
        },
        response: {
          201: runSchema,
          ...errorResponses(400, 401, 404, 413, 415, 422),
          ...forbidden,
          409: {
            $ref: 'ErrorBody#',
            description: 'box_reserved: the box is reserved by another holder (the body names it and the expiry).',
          },
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      await deps.checkReservation?.(body.module_id, request);
      const startedMs = startedMsOf(body.started_at, nowMs());
      const run = await runs.start({
        moduleId: body.module_id,
        kind: body.kind,
        source: body.source,
        startedBy: operatorName(request),
        target: body.target,
        labels: body.labels ?? {},
        options: body.options ?? {},
        ...(startedMs === undefined ? {} : { startedMs }),
      });
      return reply.status(201).send(run);
    },
  );

  app.post(
    '/runs/:id/results',
    {
      config: runIdError,
      schema: {
        tags: ['operator'],
        summary: 'Append results (cases or soak limits) to a run being recorded, in the order they ended',
        description: `0 to ${MAX_RESULTS_PER_CALL} results a call; an empty call says the run is still going (a command-line run quiet for 24 h is ended). Only the operator who started the run (another gets 404).`,
        security: [{ operator: [] }],
        params: runIdParams,
        body: {
          type: 'object',
          required: ['results'],
          additionalProperties: false,
          properties: {
            results: { type: 'array', maxItems: MAX_RESULTS_PER_CALL, items: resultInputSchema },
          },
        },
        response: {
          200: runSchema,
          ...errorResponses(400, 401, 404, 413, 415, 422),
          ...forbidden,
          ...conflictOnEnded,
        },
      },
    },
    async (request) => {
      await runs.ownRun(request.params.id, operatorName(request));
      const results: NewResult[] = request.body.results.map((result) => ({
        name: result.name,
        result: result.result,
        reason: result.reason ?? null,
        ms: result.ms,
        value: result.value ?? null,
        details: result.details ?? {},
      }));
      return runs.addResults(request.params.id, results);
    },
  );

  app.post(
    '/runs/:id/end',
    {
      config: runIdError,
      schema: {
        tags: ['operator'],
        summary: 'End a run being recorded, with its verdict, summary and report',
        description:
          "`report`: a conformance run's SuiteReport JSON (summary, interrupted; its results are the run's), what its JUnit is rendered from. Only the operator who started the run (another gets 404).",
        security: [{ operator: [] }],
        params: runIdParams,
        body: {
          type: 'object',
          required: ['state'],
          additionalProperties: false,
          properties: {
            state: { type: 'string', enum: ENDED_STATES },
            summary: { type: 'object', additionalProperties: true },
            report: { type: 'object', additionalProperties: true },
            error: { type: ['string', 'null'], maxLength: MAX_ERROR },
            captures: {
              type: 'array',
              maxItems: MAX_CAPTURES,
              items: { type: 'string', minLength: 1, maxLength: MAX_CAPTURE_PATH },
            },
          },
        },
        response: {
          200: runWithResultsSchema,
          ...errorResponses(400, 401, 404, 413, 415, 422),
          ...forbidden,
          ...conflictOnEnded,
        },
      },
    },
    async (request) => {
      await runs.ownRun(request.params.id, operatorName(request));
      const body = request.body;
      return runs.end(request.params.id, {
        state: body.state,
        error: body.error ?? null,
        summary: body.summary,
        report: body.report,
        captures: body.captures,
      });
    },
  );
}
