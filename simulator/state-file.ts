// What a simulated box must not forget across a restart (docs/protocol.md,
// the paragraph after step 11): box_seq, the last control sequence, the tries per
// key, the issuer keys and the revocation list. Kept in one JSON file per box,
// replaced atomically, so a crash at any moment leaves the old state or the new
// one.
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../lib/atomic-file.js';
import { initialBoxState, type BoxState, type KeyTries } from '../firmware-protocol/box.js';
import { isIssuerPublicKey } from '../firmware-protocol/index.js';
import { messageOf } from '../lib/message-of.js';

/** Version 1 (before protocol version 2) has no issuer keys and no revocations. */
interface StateDocument {
  version: 1 | 2;
  box_seq: number;
  last_control_seq: number;
  tries: { key_id: number; count: number; not_after: number }[];
  /** Version 2: hex X || Y, or null. */
  issuer_key?: string | null;
  issuer_key_previous?: string | null;
  revocations?: { key_id: number; until: number }[];
}

/** The issuer keys of the provisioning file: what a box without issuer keys of its own starts with. */
export interface IssuerSeed {
  readonly issuerKey?: Uint8Array | null;
  readonly issuerKeyPrevious?: Uint8Array | null;
}

export class StateFileError extends Error {
  override readonly name = 'StateFileError';
}

export function serializeBoxState(state: BoxState): string {
  const document: StateDocument = {
    version: 2,
    box_seq: state.boxSeq,
    last_control_seq: state.lastControlSeq,
    tries: [...state.tries].map(([keyId, entry]) => ({ key_id: keyId, count: entry.count, not_after: entry.notAfter })),
    issuer_key: hexOrNull(state.issuerKey),
    issuer_key_previous: hexOrNull(state.issuerKeyPrevious),
    revocations: [...state.revocations].map(([keyId, until]) => ({ key_id: keyId, until })),
  };
  return `${JSON.stringify(document)}\n`;
}

/**
 * Reads a state file. The box's own issuer keys win over the provisioning
 * file's (`seed`) once it has one (docs/protocol.md, Provisioning file); a file
 * without any (version 1, or a box that was never given one: SET_ISSUER never
 * leaves issuer_key empty) takes the seed's.
 */
export function parseBoxState(text: string, path: string, seed: IssuerSeed = {}): BoxState {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new StateFileError(`${path}: not valid JSON (${messageOf(error)})`);
  }
  const fields = document as Partial<StateDocument> | null;
  if (
    typeof fields !== 'object' ||
    fields === null ||
    (fields.version !== 1 && fields.version !== 2) ||
    !isU32(fields.box_seq) ||
    !isU32(fields.last_control_seq) ||
    !Array.isArray(fields.tries)
  ) {
    throw new StateFileError(`${path}: not a box state file (version 1 or 2 with box_seq, last_control_seq, tries)`);
  }
  const tries = new Map<number, KeyTries>();
  for (const entry of fields.tries) {
    if (!isU32(entry.key_id) || !isU32(entry.count) || !isU32(entry.not_after)) {
      throw new StateFileError(`${path}: a tries entry is not {key_id, count, not_after}`);
    }
    tries.set(entry.key_id, { count: entry.count, notAfter: entry.not_after });
  }
  const revocations = new Map<number, number>();
  for (const entry of fields.revocations ?? []) {
    if (!isU32(entry.key_id) || !isU32(entry.until))
      throw new StateFileError(`${path}: a revocations entry is not {key_id, until}`);
    revocations.set(entry.key_id, entry.until);
  }
  const issuerKey = issuerKeyField(fields.issuer_key, `${path}: issuer_key`);
  const issuerKeyPrevious = issuerKeyField(fields.issuer_key_previous, `${path}: issuer_key_previous`);
  const issuers = issuerKey === null ? initialBoxState(seed) : { issuerKey, issuerKeyPrevious };
  return {
    ...initialBoxState(),
    boxSeq: fields.box_seq,
    lastControlSeq: fields.last_control_seq,
    tries,
    issuerKey: issuers.issuerKey,
    issuerKeyPrevious: issuers.issuerKeyPrevious,
    revocations,
  };
}

/** The state file of one box; saves run one after another, in order. */
export class BoxStateFile {
  #pending: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  /** The saved state, or a new box's state (with the seed's issuer keys) when there is no file yet. */
  async load(seed: IssuerSeed = {}): Promise<BoxState> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return initialBoxState(seed);
      throw new StateFileError(`${this.path}: cannot be read (${messageOf(error)})`);
    }
    return parseBoxState(text, this.path, seed);
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

function hexOrNull(key: Uint8Array | null): string | null {
  return key === null ? null : Buffer.from(key).toString('hex');
}

function issuerKeyField(value: unknown, name: string): Buffer | null {
  if (value === null || value === undefined) return null;
  const key = typeof value === 'string' && /^[0-9a-f]{128}$/i.test(value) ? Buffer.from(value, 'hex') : null;
  if (key === null || !isIssuerPublicKey(key))
    throw new StateFileError(`${name} is not 128 hex digits of a point on P-256`);
  return key;
}

function isU32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}
