// What a simulated box must not forget across a restart (PROTOCOL.md, checks,
// last paragraph): box_seq, the last control sequence and the tries per key.
// Kept in one JSON file per box, replaced atomically, so a crash at any moment
// leaves the old state or the new one.
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../lib/atomic-file.js';
import { initialBoxState, type BoxState, type KeyTries } from '../firmware-protocol/box.js';

interface StateDocument {
  version: 1;
  box_seq: number;
  last_control_seq: number;
  tries: { key_id: number; count: number; not_after: number }[];
}

export class StateFileError extends Error {
  override readonly name = 'StateFileError';
}

export function serializeBoxState(state: BoxState): string {
  const document: StateDocument = {
    version: 1,
    box_seq: state.boxSeq,
    last_control_seq: state.lastControlSeq,
    tries: [...state.tries].map(([keyId, entry]) => ({ key_id: keyId, count: entry.count, not_after: entry.notAfter })),
  };
  return `${JSON.stringify(document)}\n`;
}

export function parseBoxState(text: string, path: string): BoxState {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new StateFileError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  const fields = document as Partial<StateDocument> | null;
  if (typeof fields !== 'object' || fields === null || fields.version !== 1 || !isU32(fields.box_seq) || !isU32(fields.last_control_seq) || !Array.isArray(fields.tries)) {
    throw new StateFileError(`${path}: not a box state file (version 1 with box_seq, last_control_seq, tries)`);
  }
  const tries = new Map<number, KeyTries>();
  for (const entry of fields.tries) {
    if (!isU32(entry.key_id) || !isU32(entry.count) || !isU32(entry.not_after)) {
      throw new StateFileError(`${path}: a tries entry is not {key_id, count, not_after}`);
    }
    tries.set(entry.key_id, { count: entry.count, notAfter: entry.not_after });
  }
  // Issuer keys and revocations (protocol version 2) are not kept in this file yet: issue 13's simulator part.
  return { ...initialBoxState(), boxSeq: fields.box_seq, lastControlSeq: fields.last_control_seq, tries };
}

/** The state file of one box; saves run one after another, in order. */
export class BoxStateFile {
  #pending: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  /** The saved state, or a new box's state when there is no file yet. */
  async load(): Promise<BoxState> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return initialBoxState();
      throw new StateFileError(`${this.path}: cannot be read (${(error as Error).message})`);
    }
    return parseBoxState(text, this.path);
  }

  /** Resolves once `state` is durably on disk. */
  save(state: BoxState): Promise<void> {
    const text = serializeBoxState(state);
    const saved = this.#pending.then(() => writeFileAtomic(this.path, text));
    // A failed save must not block the next one; the caller sees its own error.
    this.#pending = saved.catch(() => undefined);
    return saved;
  }
}

function isU32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}
