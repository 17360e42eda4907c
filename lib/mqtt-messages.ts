// The JSON messages on the bench's MQTT topics (docs/architecture.md, Messages):
// their types and strict parsers. A message that does not parse is counted
// and dropped by whoever receives it, never answered with a guess.
import { isBase64 } from './wire-patterns.js';

/** Passed through untouched from a command to its response. */
export interface CommandContext {
  readonly request_id?: string;
  readonly fo_user_id?: number;
  readonly smart_key_id?: number;
}

export interface CommandMessage {
  /** Base64 of the command frame. */
  readonly command: string;
  readonly context?: CommandContext;
}

export type Via = 'mqtt' | 'serial' | 'ble';

export interface ResponseMessage {
  readonly command: string;
  /** Base64 of the response frame; null when the box did not answer. */
  readonly response: string | null;
  readonly received_at: string;
  readonly via: Via;
  readonly context: CommandContext;
  readonly error?: 'timeout' | 'link_down';
}

export interface StateMessage {
  readonly barrier: 'closed' | 'opening' | 'open' | 'closing' | 'fault';
  readonly battery_mv: number;
  readonly box_time: string;
  readonly box_seq: number;
  readonly faults: readonly string[];
  readonly updated_at: string;
}

/** Why a message does not parse; `field` names the member at fault (none: not a JSON object). */
export class MessageError extends Error {
  override readonly name = 'MessageError';

  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

// Standard, padded base64 only: what docs/protocol.md (Command frame) says
// access_command is. Exported here too for the readers of these messages.
export { isBase64 };

/** Parses a command message; the bytes of `command` are returned decoded. */
export function parseCommandMessage(payload: Uint8Array | string): { message: CommandMessage; frame: Buffer } {
  const document = parseJsonObject(payload, 'command message');
  const command = document.command;
  if (typeof command !== 'string' || !isBase64(command))
    throw new MessageError('command message: "command" must be a base64 string', 'command');
  const context = parseContext(document.context, 'command message');
  return { message: context === undefined ? { command } : { command, context }, frame: Buffer.from(command, 'base64') };
}

/** A response message as a receiver takes it: `received_at` and `via` may
 * be absent (the receiver then uses its own time), `context` is {} when absent. */
export type ReceivedResponseMessage = Omit<ResponseMessage, 'received_at' | 'via'> & {
  readonly received_at?: string;
  readonly via?: Via;
};

const VIAS: readonly string[] = ['mqtt', 'serial', 'ble'] satisfies Via[];
const RESPONSE_ERRORS: readonly string[] = ['timeout', 'link_down'] satisfies NonNullable<ResponseMessage['error']>[];

/** Parses a response message (docs/architecture.md, Messages). The format of
 * received_at (ISO 8601 with an offset) is the receiver's to check: here it
 * must be a string. Absent and null members count as absent. */
export function parseResponseMessage(payload: Uint8Array | string): ReceivedResponseMessage {
  const document = parseJsonObject(payload, 'response message');
  const what = 'response message';
  const { command, response, received_at: receivedAt, via, error } = document;
  if (typeof command !== 'string' || !isBase64(command))
    throw new MessageError(`${what}: "command" must be a base64 string`, 'command');
  if (response !== undefined && response !== null && (typeof response !== 'string' || !isBase64(response)))
    throw new MessageError(`${what}: "response" must be a base64 string or null`, 'response');
  if (receivedAt !== undefined && receivedAt !== null && typeof receivedAt !== 'string')
    throw new MessageError(`${what}: "received_at" must be a string`, 'received_at');
  if (via !== undefined && via !== null && (typeof via !== 'string' || !VIAS.includes(via)))
    throw new MessageError(`${what}: "via" must be one of ${VIAS.join(', ')}`, 'via');
  if (error !== undefined && error !== null && (typeof error !== 'string' || !RESPONSE_ERRORS.includes(error)))
    throw new MessageError(`${what}: "error" must be one of ${RESPONSE_ERRORS.join(', ')}`, 'error');
  return {
    command,
    response: typeof response === 'string' ? response : null,
    ...(typeof receivedAt === 'string' ? { received_at: receivedAt } : {}),
    ...(typeof via === 'string' ? { via: via as Via } : {}),
    context: parseContext(document.context, what) ?? {},
    ...(typeof error === 'string' ? { error: error as NonNullable<ResponseMessage['error']> } : {}),
  };
}

function parseContext(value: unknown, what: string): CommandContext | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new MessageError(`${what}: "context" must be an object`, 'context');
  const fields = value as Record<string, unknown>;
  const context: { request_id?: string; fo_user_id?: number; smart_key_id?: number } = {};
  if (fields.request_id !== undefined) {
    if (typeof fields.request_id !== 'string' || fields.request_id.length > 200)
      throw new MessageError('context.request_id must be a string of at most 200 characters', 'context');
    context.request_id = fields.request_id;
  }
  for (const name of ['fo_user_id', 'smart_key_id'] as const) {
    const item = fields[name];
    if (item === undefined) continue;
    if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)
      throw new MessageError(`context.${name} must be a positive integer`, 'context');
    context[name] = item;
  }
  return context;
}

export function parseJsonObject(payload: Uint8Array | string, what: string): Record<string, unknown> {
  let document: unknown;
  try {
    document = JSON.parse(typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8'));
  } catch {
    throw new MessageError(`${what}: not JSON`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new MessageError(`${what}: must be a JSON object`);
  return document as Record<string, unknown>;
}

const BARRIERS: readonly string[] = [
  'closed',
  'opening',
  'open',
  'closing',
  'fault',
] satisfies StateMessage['barrier'][];
const MAX_FAULTS = 32;
const MAX_TEXT = 100;

/** Parses a box's state message (`{prefix}/boxes/{id}/state`, retained;
 * published by simulated boxes, simulator/links/mqtt-link.ts, and by the
 * gateway for real boxes, gateway/box-state.ts). Every member is required;
 * the times must be ISO 8601 strings (Date.parse), `faults` short strings. */
export function parseStateMessage(payload: Uint8Array | string): StateMessage {
  const what = 'state message';
  const document = parseJsonObject(payload, what);
  const {
    barrier,
    battery_mv: batteryMv,
    box_time: boxTime,
    box_seq: boxSeq,
    faults,
    updated_at: updatedAt,
  } = document;
  if (typeof barrier !== 'string' || !BARRIERS.includes(barrier))
    throw new MessageError(`${what}: "barrier" must be one of ${BARRIERS.join(', ')}`, 'barrier');
  if (typeof batteryMv !== 'number' || !Number.isInteger(batteryMv) || batteryMv < 0 || batteryMv > 0xffff)
    throw new MessageError(`${what}: "battery_mv" must be an integer from 0 to 65535`, 'battery_mv');
  if (typeof boxSeq !== 'number' || !Number.isInteger(boxSeq) || boxSeq < 0 || boxSeq > 0xffffffff)
    throw new MessageError(`${what}: "box_seq" must be an integer from 0 to 4294967295`, 'box_seq');
  for (const [name, value] of [
    ['box_time', boxTime],
    ['updated_at', updatedAt],
  ] as const) {
    if (typeof value !== 'string' || value.length > 40 || Number.isNaN(Date.parse(value)))
      throw new MessageError(`${what}: "${name}" must be an ISO 8601 time`, name);
  }
  if (
    !Array.isArray(faults) ||
    faults.length > MAX_FAULTS ||
    !faults.every((fault) => typeof fault === 'string' && fault.length <= MAX_TEXT)
  )
    throw new MessageError(`${what}: "faults" must be an array of at most ${MAX_FAULTS} short strings`, 'faults');
  return {
    barrier: barrier as StateMessage['barrier'],
    battery_mv: batteryMv,
    box_time: boxTime as string,
    box_seq: boxSeq,
    faults: faults as string[],
    updated_at: updatedAt as string,
  };
}
