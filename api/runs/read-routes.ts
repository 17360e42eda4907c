// GET /api/operator/runs (a page of runs, newest first, filtered),
// /runs/compare (two runs side by side), /runs/{id} (a run with its
// results) and /runs/{id}/junit (its JUnit XML). /runs/compare is a static
// path: fastify's router takes it before the parametric /runs/{id}.
// Query strings are text (no coercion): each parameter has a pattern or an
// enum, a bad one is a 422 naming it.
import type { FastifyInstance } from 'fastify';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';
import { compareRuns } from './compare.js';
import type { Runs } from './runs.js';
import {
  comparisonSchema,
  DEFAULT_RUNS_LIMIT,
  forbidden,
  LABEL_NAME_PATTERN,
  MAX_LABEL_VALUE,
  MAX_LABELS,
  MAX_RUNS_LIMIT,
  runIdParams,
  runIdSchema,
  runSchema,
  runWithResultsSchema,
} from './schemas.js';
import { RUN_KINDS, RUN_STATES, type RunWithResults } from './view.js';

export interface RunReadRouteDeps {
  runs: Runs;
  /** The JUnit XML of an ended run from its results and stored report
   * (api/conformance-runs/, which alone renders the suite's reports). */
  junitOf: (run: RunWithResults, report: unknown) => string;
}

const labelQuery = {
  type: 'string',
  minLength: 3,
  maxLength: 64 + 1 + MAX_LABEL_VALUE,
  pattern: '^[A-Za-z0-9_.-]{1,64}=',
} as const;

function labelsOf(raw: string | readonly string[] | undefined): [string, string][] {
  if (raw === undefined) return [];
  const all = typeof raw === 'string' ? [raw] : raw;
  return all.map((text) => {
    const at = text.indexOf('=');
    const name = text.slice(0, at);
    if (!new RegExp(LABEL_NAME_PATTERN).test(name))
      throw new ApiError('validation_failed', undefined, [{ path: 'label', message: 'must be name=value' }]);
    return [name, text.slice(at + 1)];
  });
}

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_RUNS_LIMIT;
  const limit = Number(raw);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RUNS_LIMIT)
    throw new ApiError('validation_failed', undefined, [{ path: 'limit', message: `must be 1 to ${MAX_RUNS_LIMIT}` }]);
  return limit;
}

const errors = { ...errorResponses(401, 422), ...forbidden } as const;

export function runReadRoutes(instance: FastifyInstance, deps: RunReadRouteDeps): void {
  const app = typedRoutes(instance);
  const { runs } = deps;

  app.get(
    '/runs',
    {
      schema: {
        tags: ['operator'],
        summary: 'Kept runs (conformance and soak), newest first, a page at a time (cursor pagination)',
        description: `Every run of every box, whoever started it and from where, without its results (GET /api/operator/runs/{id} has them). Newest first (started_at, then id, descending); \`limit\` 1 to ${MAX_RUNS_LIMIT} (default ${DEFAULT_RUNS_LIMIT}); \`next_cursor\` is passed back as \`cursor\` for the next page. \`label=name=value\` may be repeated: a run has every one.`,
        security: [{ operator: [] }],
        querystring: {
          type: 'object',
          properties: {
            module_id: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$', description: "Only this box's runs." },
            label: {
              anyOf: [labelQuery, { type: 'array', items: labelQuery, maxItems: MAX_LABELS }],
              description: `name=value; repeated: every one must match (at most ${MAX_LABELS}).`,
            },
            verdict: { type: 'string', enum: RUN_STATES, description: 'Only runs in this state.' },
            kind: { type: 'string', enum: RUN_KINDS },
            limit: {
              type: 'string',
              pattern: '^[1-9][0-9]{0,2}$',
              description: `1 to ${MAX_RUNS_LIMIT} (default ${DEFAULT_RUNS_LIMIT}).`,
            },
            cursor: {
              type: 'string',
              pattern: '^[A-Za-z0-9_-]+$',
              maxLength: 200,
              description: 'next_cursor of the previous page.',
            },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['runs', 'next_cursor'],
            properties: {
              runs: { type: 'array', items: runSchema },
              next_cursor: { type: ['string', 'null'], description: 'Opaque; null on the last page.' },
            },
          },
          ...errors,
        },
      },
    },
    (request) => {
      const query = request.query;
      return runs.list({
        limit: limitOf(query.limit),
        labels: labelsOf(query.label),
        ...(query.module_id === undefined ? {} : { moduleId: Number(query.module_id) }),
        ...(query.verdict === undefined ? {} : { state: query.verdict }),
        ...(query.kind === undefined ? {} : { kind: query.kind }),
        ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      });
    },
  );

  app.get(
    '/runs/compare',
    {
      schema: {
        tags: ['operator'],
        summary: 'Two runs side by side: each case regressed, fixed, same, new or gone, and the figures that changed',
        description:
          'a is the base (before), b the other (after). A case is regressed when it failed in b and not in a, fixed when it failed in a and not in b, same otherwise; new when only b has it, gone when only a has it. Regressed cases come first, then fixed, new, gone, same. `figures` are the numbers that differ: duration_ms, the summary counts and numbers, `ms:<case>` for a case whose time moved by more than 25 % and 10 ms, and `value:<limit>` for a soak limit (named by its expression) whose measured value differs.',
        security: [{ operator: [] }],
        querystring: {
          type: 'object',
          properties: {
            a: { ...runIdSchema, description: 'The base run (before).' },
            b: { ...runIdSchema, description: 'The other run (after).' },
          },
        },
        response: {
          200: comparisonSchema,
          400: { $ref: 'ErrorBody#', description: 'missing_parameter: a or b is missing.' },
          ...errorResponses(401, 404, 422),
          ...forbidden,
          409: {
            $ref: 'ErrorBody#',
            description: 'operation_refused: the runs are of two kinds (conformance and soak).',
          },
        },
      },
    },
    async (request) => {
      const { a, b } = request.query;
      const missing = [...(a === undefined ? ['a'] : []), ...(b === undefined ? ['b'] : [])];
      if (a === undefined || b === undefined)
        throw new ApiError(
          'missing_parameter',
          undefined,
          missing.map((path) => ({ path, message: 'is required' })),
        );
      const [before, after] = await Promise.all([runOrNotFound(runs, a, 'a'), runOrNotFound(runs, b, 'b')]);
      if (before.kind !== after.kind)
        throw new ApiError('operation_refused', undefined, [
          {
            path: 'b',
            message: `run ${b} is a ${after.kind} run and run ${a} a ${before.kind} run: compare runs of one kind`,
          },
        ]);
      return compareRuns(before, after);
    },
  );

  app.get(
    '/runs/:id',
    {
      config: refusalsAbout('id'),
      schema: {
        tags: ['operator'],
        summary: 'A kept run with its results, in the order they ended',
        security: [{ operator: [] }],
        params: runIdParams,
        response: { 200: runWithResultsSchema, ...errorResponses(401, 404, 422), ...forbidden },
      },
    },
    (request) => runs.found(request.params.id),
  );

  app.get(
    '/runs/:id/junit',
    {
      config: refusalsAbout('id'),
      schema: {
        tags: ['operator'],
        summary: 'The JUnit XML of an ended run',
        description:
          "A conformance run's is what `parkbench conformance --junit FILE` writes (the suite's own writer, from the stored report and results); a soak run's one testcase per limit, as `parkbench soak` writes it.",
        security: [{ operator: [] }],
        params: runIdParams,
        response: {
          200: {
            description: 'JUnit XML, one testcase per case or limit.',
            content: { 'application/xml': { schema: { type: 'string' } } },
          },
          ...errorResponses(401, 404, 422),
          ...forbidden,
          409: { $ref: 'ErrorBody#', description: 'operation_refused: the run has not ended.' },
        },
      },
    },
    async (request, reply) => {
      const { run, report } = await runs.withReport(request.params.id);
      if (run.state === 'running')
        throw new ApiError('operation_refused', undefined, [
          { path: 'id', message: `run ${run.id} has not ended: its JUnit comes at the end` },
        ]);
      return reply
        .type('application/xml; charset=utf-8')
        .header('content-disposition', `attachment; filename="${run.kind}-${run.module_id}-${run.id}.xml"`)
        .serializer((payload: unknown) => String(payload))
        .send(deps.junitOf(run, report));
    },
  );
}

async function runOrNotFound(runs: Runs, id: string, path: 'a' | 'b'): Promise<RunWithResults> {
  const run = await runs.get(id);
  if (run === undefined) throw new ApiError('resource_not_found', undefined, [{ path, message: `no run ${id}` }]);
  return run;
}
