// The body of POST /api/box_logs (spec 4.1, 2.1) as a JSON schema: the one
// the OpenAPI document shows and the one fastify's ajv runs (allErrors, no
// coercion: app.ts), so the two cannot drift. Types, `type` in
// in|out|control, `created_at` as `YYYY-MM-DD HH:MM:SS` (UTC, years
// 0001..9999: the `sql-time` format, api/http/formats.ts), texts well-formed (no
// lone surrogate), optional and nullable `point_attributes` with
// latitude/longitude in range, `command` and `response` in standard padded
// base64. Every failure is a detail naming the element and field
// (`box_logs[3].box_log.type`, error-handler.ts). What passes is converted
// by boxLogEntries without further checks.
import { U32_MAX } from '../../firmware-protocol/index.js';
import { BASE64_PATTERN } from '../../lib/wire-patterns.js';
import { SQL_TIME_FORMAT, WELL_FORMED_TEXT_PATTERN } from '../http/schemas.js';
import type { FromSchema } from 'json-schema-to-ts';
import type { BoxLogInput } from './types.js';

/** A command is at most 169 bytes (228 in base64); room for what a buggy app sends. */
const MAX_BASE64_LENGTH = 1024;
const MAX_TEXT_LENGTH = 4096;

const base64 = (description: string) =>
  ({
    type: ['string', 'null'],
    maxLength: MAX_BASE64_LENGTH,
    pattern: BASE64_PATTERN,
    description,
  }) as const;
const text = { type: ['string', 'null'], maxLength: MAX_TEXT_LENGTH, pattern: WELL_FORMED_TEXT_PATTERN } as const;

/** One box log (spec 2.1). Exported so that a test can add a field and see it enforced. */
export const boxLogSchema = {
  type: 'object',
  required: ['fo_user_id', 'smart_key_id', 'equipment_id', 'secured_parking_id', 'type', 'offline', 'created_at'],
  properties: {
    fo_user_id: {
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'The authenticated user.',
    },
    smart_key_id: { type: ['integer', 'null'], minimum: 1, maximum: U32_MAX },
    equipment_id: { type: 'integer', minimum: 0, maximum: U32_MAX, description: "The box's module id." },
    secured_parking_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    type: { type: 'string', enum: ['in', 'out', 'control'] },
    command: base64('Base64 of the command frame (standard alphabet, padded).'),
    command_decrypted: text,
    response: base64('Base64 of the response frame (standard alphabet, padded).'),
    response_decrypted: text,
    offline: { type: 'boolean' },
    created_at: {
      type: 'string',
      format: SQL_TIME_FORMAT,
      description: 'YYYY-MM-DD HH:MM:SS, UTC, years 0001 to 9999.',
    },
    point_attributes: {
      type: ['object', 'null'],
      required: ['latitude', 'longitude'],
      properties: {
        latitude: { type: 'number', minimum: -90, maximum: 90 },
        longitude: { type: 'number', minimum: -180, maximum: 180 },
      },
    },
  },
} as const;

/** The whole body: `{"box_logs": [{"box_log": {...}}, ...]}` with at most `maxBatch` elements. */
export function boxLogsBodySchema(maxBatch: number) {
  return {
    type: 'object',
    required: ['box_logs'],
    properties: {
      box_logs: {
        type: 'array',
        maxItems: maxBatch,
        description: `At most BOX_LOGS_MAX_BATCH (here ${maxBatch}) elements.`,
        items: { type: 'object', required: ['box_log'], properties: { box_log: boxLogSchema } },
      },
    },
  } as const;
}

/** A body that passed boxLogsBodySchema, as fastify hands it over (its type derived from the schema). */
export type BoxLogsBody = FromSchema<ReturnType<typeof boxLogsBodySchema>>;

/** A validated body's logs, absent optional fields as null. */
export function boxLogEntries(body: BoxLogsBody): BoxLogInput[] {
  return body.box_logs.map(({ box_log: log }) => ({
    fo_user_id: log.fo_user_id,
    smart_key_id: log.smart_key_id,
    equipment_id: log.equipment_id,
    secured_parking_id: log.secured_parking_id,
    type: log.type,
    command: log.command ?? null,
    command_decrypted: log.command_decrypted ?? null,
    response: log.response ?? null,
    response_decrypted: log.response_decrypted ?? null,
    offline: log.offline,
    created_at: log.created_at,
    // Only the two coordinates are stored, whatever else the object holds.
    point_attributes: log.point_attributes
      ? { latitude: log.point_attributes.latitude, longitude: log.point_attributes.longitude }
      : null,
  }));
}
