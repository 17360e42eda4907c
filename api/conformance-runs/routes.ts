// The conformance suite run against a box from the operator API:
// POST /api/operator/boxes/:module_id/conformance starts a run (202), GET
// /api/operator/conformance/:run_id follows it as its cases end, POST
// /api/operator/boxes/:module_id/conformance/:run_id/cancel stops it (202),
// and .../junit.xml and .../report.json are the files `parkbench conformance
// --junit FILE` and `--json` write, rendered by the same code.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jsonFile, junitFile, type RunFile } from './files.js';
import { RUN_DEFAULTS, type ConformanceRuns, type EndedRun } from './runs.js';
import { refusalsAbout } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import type { MqttService } from '../mqtt/index.js';
import { BOX_RESERVED_409, guardReservation, type ReservationGuardDeps } from '../reservations/index.js';
import { errorResponses } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';
import { labelsBodySchema } from '../runs/index.js';

/** A type or null, literal so that the schema's type can be derived from it. */
const nullable = <T extends 'string' | 'integer'>(type: T) => ({ type: [type, 'null'] }) as const;

const caseSchema = {
  type: 'object',
  required: ['name', 'step', 'expected', 'got', 'result', 'reason', 'ms', 'wearing'],
  properties: {
    name: { type: 'string' },
    step: { type: 'string', description: 'Where in docs/protocol.md the rule is.' },
    expected: { type: 'string' },
    got: { type: 'string' },
    result: { type: 'string', enum: ['pass', 'fail', 'skip'] },
    reason: { ...nullable('string'), description: 'Why it failed or was skipped; null when it passed.' },
    ms: { type: 'integer' },
    wearing: { type: 'boolean', description: 'Wears a real box (skipped with skip_wearing).' },
  },
} as const;

export const conformanceRunSchema = {
  type: 'object',
  required: ['id', 'module_id', 'state', 'started_at', 'ended_at', 'error', 'options', 'cases', 'summary'],
  properties: {
    id: { type: 'string' },
    module_id: { type: 'integer' },
    state: { type: 'string', enum: ['running', 'passed', 'failed', 'error'] },
    started_at: { type: 'string' },
    ended_at: nullable('string'),
    error: {
      ...nullable('string'),
      description: 'Why the run ended in error (the broker not reached, the API stopped); null otherwise.',
    },
    options: {
      type: 'object',
      required: ['skip_wearing', 'protocol', 'answer_ms', 'cycle_ms'],
      properties: {
        skip_wearing: { type: 'boolean' },
        protocol: { type: 'integer', enum: [1, 2] },
        answer_ms: { type: 'integer' },
        cycle_ms: { type: 'integer' },
      },
    },
    cases: { type: 'array', items: caseSchema, description: 'The cases that have ended, in order.' },
    summary: {
      type: 'object',
      description: "The CLI's --json summary once the run has ended; counts so far while it runs.",
      required: ['target', 'module_id', 'total', 'passed', 'failed', 'skipped', 'ms', 'control_seq', 'interrupted'],
      properties: {
        target: { type: 'string' },
        module_id: { type: 'integer' },
        total: { type: 'integer' },
        passed: { type: 'integer' },
        failed: { type: 'integer' },
        skipped: { type: 'integer' },
        ms: { type: 'integer' },
        control_seq: {
          type: 'object',
          required: ['first', 'next'],
          properties: { first: { type: 'integer' }, next: nullable('integer') },
        },
        interrupted: { type: 'boolean' },
      },
    },
  },
} as const;

const runResponse = { type: 'object', required: ['run'], properties: { run: conformanceRunSchema } } as const;

const runId = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;
const moduleId = { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$' } as const;

const runIdParams = { type: 'object', required: ['run_id'], properties: { run_id: runId } } as const;

const forbidden = { 403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." } };

/** A finished run's file; a run still going, or one that never reached the suite, has none. */
async function fileOf(runs: ConformanceRuns, runId: string, render: typeof junitFile): Promise<RunFile> {
  const ended: EndedRun = await runs.ended(runId);
  if (ended.report === undefined)
    throw new ApiError('operation_refused', undefined, [
      { path: 'run_id', message: `conformance run ${runId} ended before the suite ran: ${ended.run.error ?? 'error'}` },
    ]);
  return render(ended.run.module_id, ended.report);
}

/** The file as an attachment, its text as rendered (never re-serialised). */
function sendFile(reply: FastifyReply, file: RunFile, type: string): FastifyReply {
  return reply
    .type(`${type}; charset=utf-8`)
    .header('content-disposition', `attachment; filename="${file.filename}"`)
    .serializer((payload: unknown) => String(payload))
    .send(file.text);
}

export function operatorConformanceRoutes(
  instance: FastifyInstance,
  runs: ConformanceRuns,
  mqtt: MqttService | undefined,
  reserved: ReservationGuardDeps,
): void {
  const app = typedRoutes(instance);
  app.post(
    '/boxes/:module_id/conformance',
    {
      config: refusalsAbout('module_id'),
      schema: {
        tags: ['operator'],
        summary:
          'Start the conformance suite against a box through the MQTT broker of the API; follow it at GET /api/operator/conformance/{run_id}',
        security: [{ operator: [] }],
        params: { type: 'object', required: ['module_id'], properties: { module_id: moduleId } },
        body: {
          type: 'object',
          description: "`{}` for the CLI's defaults; each field as the CLI flag of that name.",
          properties: {
            skip_wearing: {
              type: 'boolean',
              description: 'Skip the cases that wear a real box (--skip-wearing). Default false.',
            },
            protocol: {
              type: 'integer',
              enum: [1, 2],
              description: '1: the version 1 cases alone (--protocol). Default 2.',
            },
            answer_ms: {
              type: 'integer',
              minimum: 1,
              maximum: 600_000,
              description: `Longest acceptable answer (--answer-ms). Default ${RUN_DEFAULTS.answerMs}.`,
            },
            cycle_ms: {
              type: 'integer',
              minimum: 1,
              maximum: 3_600_000,
              description: `Longest barrier cycle after a valid ACCESS (--cycle-ms). Default ${RUN_DEFAULTS.cycleMs}.`,
            },
            source: {
              type: 'string',
              enum: ['page', 'api'],
              description:
                'Where the run is started from, as it is kept (GET /api/operator/runs): the bench page sends `page`. Default api.',
            },
            labels: labelsBodySchema,
          },
        },
        response: {
          202: runResponse,
          ...errorResponses(400, 401, 404, 415, 422),
          ...forbidden,
          409: {
            $ref: 'ErrorBody#',
            description: `operation_refused: the box is under a run already (of this API process or another: its hold on the box is live), is offline, or has no control sequences left. ${BOX_RESERVED_409}`,
          },
          503: { $ref: 'ErrorBody#', description: 'mqtt_unavailable: no MQTT broker connected.' },
        },
      },
    },
    async (request, reply) => {
      const moduleId = Number(request.params.module_id);
      const body = request.body; // an object: fastify validates a missing body as null, which its schema refuses
      if (mqtt === undefined) throw new ApiError('mqtt_unavailable');
      await guardReservation(reserved, moduleId, request);
      const run = await runs.start(
        moduleId,
        {
          skipWearing: body.skip_wearing ?? RUN_DEFAULTS.skipWearing,
          protocol: body.protocol ?? RUN_DEFAULTS.protocol,
          answerMs: body.answer_ms ?? RUN_DEFAULTS.answerMs,
          cycleMs: body.cycle_ms ?? RUN_DEFAULTS.cycleMs,
        },
        mqtt,
        {
          source: body.source ?? 'api',
          startedBy: request.operator?.name ?? 'unknown',
          labels: body.labels ?? {},
        },
        `operator ${request.operator?.name ?? 'unknown'} (HTTP)`,
      );
      return reply.status(202).send({ run });
    },
  );

  app.post(
    '/boxes/:module_id/conformance/:run_id/cancel',
    {
      config: refusalsAbout('run_id'),
      schema: {
        tags: ['operator'],
        summary: 'Cancel a running conformance run: it stops at once and ends in error, its box free again',
        description:
          "The case in flight stops waiting at once and no other case starts; the box's issuer keys are put back (their answer waited for 2 s at most: a put-back not confirmed stays queued and goes out once the box is free). Answers 202 with the run as it is now; it ends (state error, error `cancelled by operator NAME; ...`) within a few seconds, as GET /api/operator/conformance/{run_id} and the event stream then show.",
        security: [{ operator: [] }],
        params: {
          type: 'object',
          required: ['module_id', 'run_id'],
          properties: { module_id: moduleId, run_id: runId },
        },
        response: {
          202: runResponse,
          ...errorResponses(401, 404, 422),
          ...forbidden,
          409: { $ref: 'ErrorBody#', description: 'operation_refused: the run has ended already.' },
        },
      },
    },
    (request, reply) => {
      const run = runs.cancel(
        request.params.run_id,
        Number(request.params.module_id),
        `operator ${request.operator?.name ?? 'unknown'}`,
      );
      return reply.status(202).send({ run });
    },
  );

  app.get(
    '/conformance/:run_id',
    {
      schema: {
        tags: ['operator'],
        summary:
          'A conformance run: its state and the cases that have ended (kept in the database, GET /api/operator/runs/{id} too)',
        security: [{ operator: [] }],
        params: runIdParams,
        response: { 200: runResponse, ...errorResponses(401, 404, 422), ...forbidden },
      },
    },
    async (request) => {
      const run = await runs.get(request.params.run_id);
      if (run === undefined)
        throw new ApiError('resource_not_found', undefined, [
          { path: 'run_id', message: `no conformance run ${request.params.run_id}` },
        ]);
      return { run };
    },
  );

  const fileErrors = {
    ...errorResponses(401, 404, 422),
    ...forbidden,
    409: {
      $ref: 'ErrorBody#',
      description: 'operation_refused: the run has not ended, or ended before the suite ran.',
    },
  };

  app.get(
    '/conformance/:run_id/junit.xml',
    {
      config: refusalsAbout('run_id'),
      schema: {
        tags: ['operator'],
        summary: 'The JUnit XML of an ended run: what `parkbench conformance --junit FILE` writes',
        security: [{ operator: [] }],
        params: runIdParams,
        response: {
          200: {
            description: 'JUnit XML, one testcase per case.',
            content: { 'application/xml': { schema: { type: 'string' } } },
          },
          ...fileErrors,
        },
      },
    },
    async (request, reply) => sendFile(reply, await fileOf(runs, request.params.run_id, junitFile), 'application/xml'),
  );

  app.get(
    '/conformance/:run_id/report.json',
    {
      config: refusalsAbout('run_id'),
      schema: {
        tags: ['operator'],
        summary: 'The JSON report of an ended run: what `parkbench conformance --json` prints',
        security: [{ operator: [] }],
        params: runIdParams,
        response: {
          200: {
            description: '{results, summary, interrupted}, as the CLI prints it.',
            content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
          },
          ...fileErrors,
        },
      },
    },
    async (request, reply) => sendFile(reply, await fileOf(runs, request.params.run_id, jsonFile), 'application/json'),
  );
}
