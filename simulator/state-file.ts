// What a simulated box must not forget across a restart (docs/protocol.md,
// the paragraph after step 11): box_seq, the last control sequence, the tries per
// key, the issuer keys and the revocation list. Kept in one JSON file per box,
// replaced atomically, so a crash at any moment leaves the old state or the new
// one. The file is named by the box's identity, its module id and a
// fingerprint of its box key (boxStatePath), so two provisionings of one
// module id (two databases, a box added again) never share state.
import { createHash } from 'node:crypto';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../lib/atomic-file.js';
import type { Provisioning } from '../lib/provisioning-file.js';
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
    const text = await textOf(this.path);
    return text === undefined ? initialBoxState(seed) : parseBoxState(text, this.path, seed);
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

/** The box's identity: what names its state file. */
export type BoxIdentity = Pick<Provisioning, 'moduleId' | 'boxKey'>;

/** `box-<module_id>-<fingerprint>.json` in `dir`: the fingerprint is the
 * first 16 hex digits of the SHA-256 of the box key, which tells two
 * provisionings apart and gives nothing of the key away. */
export function boxStatePath(dir: string, box: BoxIdentity): string {
  const fingerprint = createHash('sha256').update(box.boxKey).digest('hex').slice(0, 16);
  return join(dir, `box-${box.moduleId}-${fingerprint}.json`);
}

/**
 * The state file of a box in `dir`. A file named by the module id alone
 * (`box-<module_id>.json`, the name an older parkbench gave it) is taken
 * over, renamed to the identity's name, when it is this box's: when it holds
 * an issuer key the provisioning file names (issuer keys are made per
 * parking, so another database's box never holds one of them). Any other
 * such file (another box's, one without issuer keys, one that does not
 * parse) is left where it is: the box starts afresh.
 */
export async function boxStateFileOf(dir: string, box: Provisioning): Promise<BoxStateFile> {
  const path = boxStatePath(dir, box);
  const legacy = join(dir, `box-${box.moduleId}.json`);
  if ((await textOf(path)) === undefined) {
    const text = await textOf(legacy);
    if (text !== undefined && holdsIssuerKeyOf(parsedOrUndefined(text, legacy), box)) await rename(legacy, path);
  }
  return new BoxStateFile(path);
}

function parsedOrUndefined(text: string, path: string): BoxState | undefined {
  try {
    return parseBoxState(text, path);
  } catch {
    return undefined;
  }
}

function holdsIssuerKeyOf(state: BoxState | undefined, box: Provisioning): boolean {
  if (state === undefined) return false;
  const named = [box.issuerKey, box.issuerKeyPrevious].filter((key) => key !== null && key !== undefined);
  const held = [state.issuerKey, state.issuerKeyPrevious].filter((key) => key !== null);
  return held.some((key) => named.some((other) => Buffer.from(key).equals(other)));
}

/** The file's text, or undefined when there is none. */
async function textOf(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StateFileError(`${path}: cannot be read (${messageOf(error)})`);
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
