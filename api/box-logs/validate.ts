// Validation of POST /api/box_logs bodies (spec 4.1, 2.1): types, `type` in
// in|out|control, `created_at` as `YYYY-MM-DD HH:MM:SS` (UTC, years
// 0001..9999: sessions/time.ts), texts well-formed (no lone surrogate), optional and
// nullable `point_attributes` with latitude/longitude in range, `command` and
// `response` in standard padded base64. Every failure is a detail naming the
// element and field (`box_logs[3].box_log.type`). Hand-written rather than a
// JSON schema: exact paths, and ~1 µs an element on the hot path.
import type { ErrorDetail } from '../errors.js';
import { isWellFormedText } from '../schemas.js';
import { parseSqlTime } from '../sessions/time.js';
import type { BoxLogInput, BoxLogType, PointAttributes } from './types.js';

const U32_MAX = 4_294_967_295;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A command is at most 169 bytes (228 in base64); room for what a buggy app sends. */
const MAX_BASE64_LENGTH = 1024;
const MAX_TEXT_LENGTH = 4096;
/** Details past this many are dropped (the first ones say enough). */
const MAX_DETAILS = 100;
const TYPES: readonly BoxLogType[] = ['in', 'out', 'control'];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The last time parsed: the logs of a batch mostly share a few seconds. */
let lastCreatedAt: { text: string; ms: number | undefined } = { text: '', ms: undefined };

/** "2026-06-01 08:00:00" -> ms since the epoch (UTC), or undefined if no
 * such time in years 0001..9999 (parseSqlTime, cached). */
export function parseCreatedAt(text: string): number | undefined {
  if (text === lastCreatedAt.text) return lastCreatedAt.ms;
  const ms = parseSqlTime(text);
  lastCreatedAt = { text, ms };
  return ms;
}

class Checker {
  readonly details: ErrorDetail[] = [];

  fail(path: string, message: string): void {
    if (this.details.length < MAX_DETAILS) this.details.push({ path, message });
  }

  integer(object: Json, field: string, path: string, options: { nullable: boolean; min: number; max: number }): number | null {
    const value = object[field];
    if (value === undefined) {
      this.fail(`${path}.${field}`, 'is required');
      return null;
    }
    if (value === null) {
      if (!options.nullable) this.fail(`${path}.${field}`, 'must not be null');
      return null;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.fail(`${path}.${field}`, 'must be of type integer');
      return null;
    }
    if (value < options.min || value > options.max) {
      this.fail(`${path}.${field}`, `must be from ${options.min} to ${options.max}`);
      return null;
    }
    return value;
  }

  /** An optional, nullable string (absent is null). */
  text(object: Json, field: string, path: string, base64: boolean): string | null {
    const value = object[field];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') {
      this.fail(`${path}.${field}`, 'must be of type string');
      return null;
    }
    if (value.length > (base64 ? MAX_BASE64_LENGTH : MAX_TEXT_LENGTH)) {
      this.fail(`${path}.${field}`, `must be at most ${base64 ? MAX_BASE64_LENGTH : MAX_TEXT_LENGTH} characters`);
      return null;
    }
    if (base64 && !BASE64.test(value)) {
      this.fail(`${path}.${field}`, 'must be base64 (standard alphabet, padded)');
      return null;
    }
    if (!isWellFormedText(value)) {
      // It could not be stored as UTF-8.
      this.fail(`${path}.${field}`, 'must be well-formed Unicode (no lone surrogate)');
      return null;
    }
    return value;
  }

  point(object: Json, path: string): PointAttributes | null {
    const value = object.point_attributes;
    if (value === undefined || value === null) return null;
    if (!isObject(value)) {
      this.fail(`${path}.point_attributes`, 'must be an object or null');
      return null;
    }
    const coordinate = (field: string, limit: number): number | undefined => {
      const number = value[field];
      if (typeof number !== 'number' || !Number.isFinite(number)) {
        this.fail(`${path}.point_attributes.${field}`, number === undefined ? 'is required' : 'must be a number');
        return undefined;
      }
      if (number < -limit || number > limit) {
        this.fail(`${path}.point_attributes.${field}`, `must be from -${limit} to ${limit}`);
        return undefined;
      }
      return number;
    };
    const latitude = coordinate('latitude', 90);
    const longitude = coordinate('longitude', 180);
    return latitude === undefined || longitude === undefined ? null : { latitude, longitude };
  }
}

/** One box log (the object inside `box_log`); undefined when it has errors (then in `checker`). */
function boxLog(checker: Checker, raw: unknown, path: string): BoxLogInput | undefined {
  if (!isObject(raw)) {
    checker.fail(path, raw === undefined ? 'is required' : 'must be an object');
    return undefined;
  }
  const before = checker.details.length;
  const foUserId = checker.integer(raw, 'fo_user_id', path, { nullable: false, min: 1, max: Number.MAX_SAFE_INTEGER });
  const smartKeyId = checker.integer(raw, 'smart_key_id', path, { nullable: true, min: 1, max: U32_MAX });
  const equipmentId = checker.integer(raw, 'equipment_id', path, { nullable: false, min: 0, max: U32_MAX });
  const parkingId = checker.integer(raw, 'secured_parking_id', path, { nullable: false, min: 1, max: Number.MAX_SAFE_INTEGER });
  const type = raw.type;
  if (type === undefined) checker.fail(`${path}.type`, 'is required');
  else if (typeof type !== 'string' || !TYPES.includes(type as BoxLogType)) checker.fail(`${path}.type`, 'must be one of in, out, control');
  const command = checker.text(raw, 'command', path, true);
  const commandDecrypted = checker.text(raw, 'command_decrypted', path, false);
  const response = checker.text(raw, 'response', path, true);
  const responseDecrypted = checker.text(raw, 'response_decrypted', path, false);
  const offline = raw.offline;
  if (offline === undefined) checker.fail(`${path}.offline`, 'is required');
  else if (typeof offline !== 'boolean') checker.fail(`${path}.offline`, 'must be of type boolean');
  const createdAt = raw.created_at;
  if (createdAt === undefined) checker.fail(`${path}.created_at`, 'is required');
  else if (typeof createdAt !== 'string' || parseCreatedAt(createdAt) === undefined) checker.fail(`${path}.created_at`, 'must be a UTC time as YYYY-MM-DD HH:MM:SS, years 0001 to 9999');
  const point = checker.point(raw, path);
  if (checker.details.length > before) return undefined;
  return {
    fo_user_id: foUserId,
    smart_key_id: smartKeyId,
    equipment_id: equipmentId as number,
    secured_parking_id: parkingId as number,
    type: type as BoxLogType,
    command,
    command_decrypted: commandDecrypted,
    response,
    response_decrypted: responseDecrypted,
    offline: offline as boolean,
    created_at: createdAt as string,
    point_attributes: point,
  };
}

export type Validated = { ok: true; entries: BoxLogInput[] } | { ok: false; details: ErrorDetail[] };

/** The whole body: `{"box_logs": [{"box_log": {...}}, ...]}` with at most `maxBatch` elements. */
export function validateBoxLogsBody(body: unknown, maxBatch: number): Validated {
  const checker = new Checker();
  const list = isObject(body) ? body.box_logs : undefined;
  if (!Array.isArray(list)) {
    checker.fail('box_logs', list === undefined ? 'is required' : 'must be an array');
    return { ok: false, details: checker.details };
  }
  if (list.length > maxBatch) {
    checker.fail('box_logs', `must have at most ${maxBatch} elements (BOX_LOGS_MAX_BATCH), got ${list.length}`);
    return { ok: false, details: checker.details };
  }
  const entries: BoxLogInput[] = [];
  list.forEach((element: unknown, index) => {
    const path = `box_logs[${index}]`;
    if (!isObject(element)) {
      checker.fail(path, 'must be an object with one key box_log');
      return;
    }
    const entry = boxLog(checker, element.box_log, `${path}.box_log`);
    if (entry) entries.push(entry);
  });
  return checker.details.length > 0 ? { ok: false, details: checker.details } : { ok: true, entries };
}
