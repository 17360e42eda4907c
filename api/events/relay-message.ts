// What one API process tells the others on PostgreSQL (relay.ts): the
// events it published, as NOTIFY payloads on one channel. Box logs, boxes,
// sessions and parkings' forwarding go as ids (a receiver reads the box log
// rows; the others name what its stream renders anew anyway); control
// deliveries, conformance runs and kept runs go whole (they live in no row a receiver
// could read).
//
// A batch is one JSON text, made ASCII (every other character as a \u
// escape, so that cutting it anywhere cuts no character), in parts of at most
// MAX_PART_CHARS: a NOTIFY payload must be under 8,000 bytes. Each part reads
// `<origin> <batch> <part>/<parts> <text>`. The parts of a batch are sent
// in one statement, so PostgreSQL delivers them in order and none of another
// transaction's between them; the assembler still checks each part follows
// the one before and drops a batch that does not.
import type { ControlDelivery, ConformanceRunLike, RunLike } from './types.js';

/** The channel every API process on the database listens on. */
export const RELAY_CHANNEL = 'parkbench_events';

/** Characters of batch text in one part (the header adds at most 50). */
export const MAX_PART_CHARS = 7_800;

/** Parts of one batch at most a receiver assembles (about 3 MB): past it the batch is dropped. */
export const MAX_PARTS = 400;

export interface RelayBatch {
  box_logs: number[];
  boxes: number[];
  sessions: number[];
  forwarding: number[];
  control: ControlDelivery[];
  conformance: ConformanceRunLike[];
  runs: RunLike[];
}

export function emptyBatch(): RelayBatch {
  return { box_logs: [], boxes: [], sessions: [], forwarding: [], control: [], conformance: [], runs: [] };
}

export function batchIsEmpty(batch: RelayBatch): boolean {
  return (
    batch.box_logs.length === 0 &&
    batch.boxes.length === 0 &&
    batch.sessions.length === 0 &&
    batch.forwarding.length === 0 &&
    batch.control.length === 0 &&
    batch.conformance.length === 0 &&
    batch.runs.length === 0
  );
}

/** The NOTIFY payloads of one batch, in order. `origin` is the sender's id (no spaces). */
export function encodeBatch(origin: string, batchNumber: number, batch: RelayBatch): string[] {
  const text = asciiJson(batch);
  const parts = Math.max(1, Math.ceil(text.length / MAX_PART_CHARS));
  const payloads: string[] = [];
  for (let part = 0; part < parts; part++)
    payloads.push(
      `${origin} ${batchNumber} ${part + 1}/${parts} ${text.slice(part * MAX_PART_CHARS, (part + 1) * MAX_PART_CHARS)}`,
    );
  return payloads;
}

/** JSON with every character past 0x7f written as a \u escape. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

const HEADER = /^(\S{1,64}) (\d{1,15}) (\d{1,6})\/(\d{1,6}) /;

export type Assembled =
  | { readonly kind: 'batch'; readonly origin: string; readonly batch: RelayBatch }
  | { readonly kind: 'partial' }
  | { readonly kind: 'invalid'; readonly reason: string };

/** Puts the parts of each origin's batches back together. */
export class BatchAssembler {
  /** Per origin, the batch being assembled. */
  readonly #pending = new Map<string, { batchNumber: string; parts: number; texts: string[] }>();

  accept(payload: string): Assembled {
    const header = HEADER.exec(payload);
    if (header === null) return { kind: 'invalid', reason: 'no header' };
    const [matched, origin = '', batchNumber = '', partText = '', partsText = ''] = header;
    const part = Number(partText);
    const parts = Number(partsText);
    if (part < 1 || parts < 1 || part > parts || parts > MAX_PARTS)
      return this.#invalid(origin, `part ${part} of ${parts}`);
    const text = payload.slice(matched.length);
    if (part === 1) {
      if (parts === 1) {
        this.#pending.delete(origin);
        return parseBatch(origin, text);
      }
      this.#pending.set(origin, { batchNumber, parts, texts: [text] });
      return { kind: 'partial' };
    }
    const pending = this.#pending.get(origin);
    if (
      pending === undefined ||
      pending.batchNumber !== batchNumber ||
      pending.parts !== parts ||
      pending.texts.length !== part - 1
    )
      return this.#invalid(origin, `part ${part} of ${parts} of batch ${batchNumber} out of order`);
    pending.texts.push(text);
    if (part < parts) return { kind: 'partial' };
    this.#pending.delete(origin);
    return parseBatch(origin, pending.texts.join(''));
  }

  #invalid(origin: string, reason: string): Assembled {
    this.#pending.delete(origin);
    return { kind: 'invalid', reason };
  }
}

function parseBatch(origin: string, text: string): Assembled {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null) return { kind: 'invalid', reason: 'not an object' };
  const record = value as Record<string, unknown>;
  const ids = (name: keyof RelayBatch): number[] | undefined => {
    const list = record[name];
    return Array.isArray(list) && list.every((id) => Number.isSafeInteger(id) && (id as number) >= 0)
      ? (list as number[])
      : undefined;
  };
  const objects = (
    name: keyof RelayBatch,
    valid: (item: Record<string, unknown>) => boolean,
  ): unknown[] | undefined => {
    const list = record[name];
    return Array.isArray(list) &&
      list.every((item) => typeof item === 'object' && item !== null && valid(item as Record<string, unknown>))
      ? list
      : undefined;
  };
  const batch = {
    box_logs: ids('box_logs'),
    boxes: ids('boxes'),
    sessions: ids('sessions'),
    forwarding: ids('forwarding'),
    control: objects(
      'control',
      (item) => Number.isSafeInteger(item['module_id']) && typeof item['operation_id'] === 'string',
    ),
    conformance: objects('conformance', (item) => typeof item['id'] === 'string' || Number.isSafeInteger(item['id'])),
    // Absent from a process that publishes no kept runs (one started before they were): none.
    runs: record['runs'] === undefined ? [] : objects('runs', (item) => typeof item['id'] === 'string'),
  };
  for (const [name, list] of Object.entries(batch))
    if (list === undefined) return { kind: 'invalid', reason: `${name} is not a list of what it carries` };
  return { kind: 'batch', origin, batch: batch as RelayBatch };
}
