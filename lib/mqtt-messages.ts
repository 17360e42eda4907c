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

export class MessageError extends Error {
  override readonly name = 'MessageError';
}

// Standard, padded base64 only: what docs/protocol.md (Command frame) says
// access_command is. Exported here too for the readers of these messages.
export { isBase64 };

/** Parses a command message; the bytes of `command` are returned decoded. */
export function parseCommandMessage(payload: Uint8Array | string): { message: CommandMessage; frame: Buffer } {
  const document = parseJsonObject(payload, 'command message');
  const command = document.command;
  if (typeof command !== 'string' || !isBase64(command)) throw new MessageError('command message: "command" must be a base64 string');
  const context = parseContext(document.context);
  return { message: context === undefined ? { command } : { command, context }, frame: Buffer.from(command, 'base64') };
}

function parseContext(value: unknown): CommandContext | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new MessageError('command message: "context" must be an object');
  const fields = value as Record<string, unknown>;
  const context: { request_id?: string; fo_user_id?: number; smart_key_id?: number } = {};
  if (fields.request_id !== undefined) {
    if (typeof fields.request_id !== 'string' || fields.request_id.length > 200) throw new MessageError('context.request_id must be a string of at most 200 characters');
    context.request_id = fields.request_id;
  }
  for (const name of ['fo_user_id', 'smart_key_id'] as const) {
    const item = fields[name];
    if (item === undefined) continue;
    if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1) throw new MessageError(`context.${name} must be a positive integer`);
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
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new MessageError(`${what}: must be a JSON object`);
  return document as Record<string, unknown>;
}
