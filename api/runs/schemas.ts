// The JSON schemas of the runs' routes (their OpenAPI document, their
// validation, their serialization): a run, a result, the limits of what a
// recording posts.
import { RUN_KINDS, RUN_SOURCES, RUN_STATES, RUN_VERDICTS } from './view.js';

/** Labels of one run at most; a label's name and value. */
export const MAX_LABELS = 32;
export const LABEL_NAME_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
export const MAX_LABEL_VALUE = 512;
/** Results in one POST /runs/{id}/results at most. */
export const MAX_RESULTS_PER_CALL = 500;
/** A result's name (a case's, a soak limit's expression) and reason, at most. */
export const MAX_RESULT_NAME = 200;
export const MAX_REASON = 2_000;
/** A run's error, a target's name, captures. */
export const MAX_ERROR = 2_000;
export const MAX_TARGET = 32;
export const MAX_CAPTURES = 1_000;
export const MAX_CAPTURE_PATH = 1_024;
/** Rows per page of GET /runs. */
export const MAX_RUNS_LIMIT = 100;
export const DEFAULT_RUNS_LIMIT = 20;

/** A type or null, literal so that the schema's type can be derived from it. */
const nullable = <T extends 'string' | 'integer' | 'number'>(type: T) => ({ type: [type, 'null'] }) as const;

export const runIdSchema = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;

export const runIdParams = { type: 'object', required: ['id'], properties: { id: runIdSchema } } as const;

const labelsSchema = {
  type: 'object',
  description: `Labels (firmware, hardware, ci_job_url, ...): at most ${MAX_LABELS}, each name 1 to 64 characters of A-Z a-z 0-9 _ . -, its value at most ${MAX_LABEL_VALUE} characters.`,
  maxProperties: MAX_LABELS,
  propertyNames: { pattern: LABEL_NAME_PATTERN },
  additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE },
} as const;

/** The labels of a body (POST /runs, POST /boxes/{module_id}/conformance). */
export const labelsBodySchema = labelsSchema;

const freeObject = { type: 'object', additionalProperties: true } as const;

export const runResultSchema = {
  type: 'object',
  required: ['name', 'result', 'reason', 'ms', 'value', 'details'],
  properties: {
    name: { type: 'string', description: "The case's name, or the soak limit's expression." },
    result: { type: 'string', enum: RUN_VERDICTS },
    reason: { ...nullable('string'), description: 'Why it failed or was skipped; null when it passed.' },
    ms: { type: 'number' },
    value: { ...nullable('number'), description: "A soak limit's measured figure; null for a case." },
    details: {
      ...freeObject,
      description: 'conformance: {step, expected, got, wearing}; soak: the limit as its kind writes it.',
    },
  },
} as const;

const runProperties = {
  id: runIdSchema,
  module_id: { type: 'integer' },
  kind: { type: 'string', enum: RUN_KINDS },
  source: {
    type: 'string',
    enum: RUN_SOURCES,
    description: 'page: the bench page; api: the operator API; cli: the command line; ci: the command line in CI.',
  },
  started_by: { type: 'string', description: "The operator's name." },
  state: { type: 'string', enum: RUN_STATES },
  target: { type: 'string', description: 'The link the run reached the box by: mqtt, serial, ble.' },
  labels: { type: 'object', additionalProperties: { type: 'string' } },
  started_at: { type: 'string' },
  ended_at: nullable('string'),
  duration_ms: { type: 'integer', description: 'To ended_at, or to now while it runs.' },
  error: { ...nullable('string'), description: 'Why the run ended in error; null otherwise.' },
  options: {
    ...freeObject,
    description: 'As the kind writes them (conformance: skip_wearing, protocol, answer_ms, cycle_ms).',
  },
  summary: {
    type: ['object', 'null'],
    additionalProperties: true,
    description:
      "The kind's summary once ended (conformance: total, passed, failed, skipped, ms, control_seq, interrupted).",
  },
  captures: {
    type: 'array',
    items: { type: 'string' },
    description: 'Capture files, as paths on the machine that ran it.',
  },
} as const;

const runRequired = [
  'id',
  'module_id',
  'kind',
  'source',
  'started_by',
  'state',
  'target',
  'labels',
  'started_at',
  'ended_at',
  'duration_ms',
  'error',
  'options',
  'summary',
  'captures',
] as const;

/** A run without its results (the list, the comparison, POST .../results). */
export const runSchema = { type: 'object', required: runRequired, properties: runProperties } as const;

/** A run with its results, in the order they ended. */
export const runWithResultsSchema = {
  type: 'object',
  required: [...runRequired, 'results'],
  properties: { ...runProperties, results: { type: 'array', items: runResultSchema } },
} as const;

/** A result as a recording posts it. */
export const resultInputSchema = {
  type: 'object',
  required: ['name', 'result', 'ms'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: MAX_RESULT_NAME },
    result: { type: 'string', enum: RUN_VERDICTS },
    reason: { type: ['string', 'null'], maxLength: MAX_REASON },
    ms: { type: 'number', minimum: 0, maximum: 1e12 },
    value: { type: ['number', 'null'] },
    details: { ...freeObject, description: 'conformance: {step, expected, got, wearing}; soak: the limit.' },
  },
} as const;

const comparedResultSchema = {
  type: ['object', 'null'],
  required: ['result', 'reason', 'ms', 'value'],
  properties: {
    result: { type: 'string', enum: RUN_VERDICTS },
    reason: nullable('string'),
    ms: { type: 'number' },
    value: nullable('number'),
  },
} as const;

export const comparisonSchema = {
  type: 'object',
  required: ['a', 'b', 'cases', 'counts', 'figures'],
  properties: {
    a: runSchema,
    b: runSchema,
    cases: {
      type: 'array',
      description: 'Regressed first, then fixed, new, gone, same; in the order of a (then of b) within each.',
      items: {
        type: 'object',
        required: ['name', 'change', 'a', 'b', 'ms_delta'],
        properties: {
          name: { type: 'string' },
          change: { type: 'string', enum: ['regressed', 'fixed', 'same', 'new', 'gone'] },
          a: comparedResultSchema,
          b: comparedResultSchema,
          ms_delta: { ...nullable('number'), description: "b's ms minus a's; null unless in both." },
        },
      },
    },
    counts: {
      type: 'object',
      required: ['regressed', 'fixed', 'same', 'new', 'gone'],
      properties: {
        regressed: { type: 'integer' },
        fixed: { type: 'integer' },
        same: { type: 'integer' },
        new: { type: 'integer' },
        gone: { type: 'integer' },
      },
    },
    figures: {
      type: 'array',
      description:
        "The figures that differ: duration_ms, the summary counts and numbers, `ms:<case>` for each case whose time moved by more than 25 % and 10 ms, and `value:<limit>` for each soak limit (named by its expression) whose measured value differs; in a's order of the cases.",
      items: {
        type: 'object',
        required: ['name', 'a', 'b', 'delta'],
        properties: {
          name: { type: 'string' },
          a: nullable('number'),
          b: nullable('number'),
          delta: nullable('number'),
        },
      },
    },
  },
} as const;

export const forbidden = { 403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." } } as const;
