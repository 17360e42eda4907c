// Command frames, service -> box (docs/protocol.md, Command frame): the header,
// sealing under K_park or K_box, and opening. Opening never throws: a bad
// frame gives the protocol status of the first check it fails. ACCESS_SIGNED
// is signed, not sealed: signed-command.ts.
import {
  COMMAND_HEADER_LENGTH,
  CommandOffset,
  FrameKind,
  NONCE_LENGTH,
  PROTOCOL_VERSION,
  Status,
  TAG_LENGTH,
  isFrameKind,
  minFrameLength,
} from './constants.js';
import { asBuffer, requireLength, requireU32, requireU8 } from './bytes.js';
import { ccmOpen, ccmSeal } from './ccm.js';
import { type BodyOfKind, decodeBody, encodeBody } from './command-body.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';
import { randomNonce } from './random-nonce.js';

/** A command's kind, key_id, scope and body, as the service means it. */
export type CommandFields = {
  [K in FrameKind]: {
    readonly kind: K;
    /** ACCESS: the smart key id; control kinds: the control sequence number. */
    readonly keyId: number;
    /** ACCESS: the secured_parking_id; control kinds: the module_id. */
    readonly scope: number;
    readonly body: BodyOfKind[K];
  };
}[FrameKind];

export type AccessCommandFields = Extract<CommandFields, { kind: typeof FrameKind.ACCESS }>;
export type SignedAccessCommandFields = Extract<CommandFields, { kind: typeof FrameKind.ACCESS_SIGNED }>;

/** The kinds sealed with AES-128-CCM: every kind but ACCESS_SIGNED. */
export type SealedKind = Exclude<FrameKind, typeof FrameKind.ACCESS_SIGNED>;
export type SealedCommandFields = Extract<CommandFields, { kind: SealedKind }>;

/** Input of sealCommand: the fields, the key (16 bytes), and optionally the
 * 12-byte nonce (random when omitted; given only for test vectors). BATTERY_QUERY
 * may omit its empty body. */
export type SealCommandInput = (
  | SealedCommandFields
  | {
      readonly kind: typeof FrameKind.BATTERY_QUERY;
      readonly keyId: number;
      readonly scope: number;
      readonly body?: BodyOfKind[typeof FrameKind.BATTERY_QUERY];
    }
) & { readonly key: Uint8Array; readonly nonce?: Uint8Array };

/** A command that opened under one of the keys: its fields and nonce. */
export type OpenedCommand = CommandFields & { readonly nonce: Buffer };

/** The 22-byte header of a command, readable without a key. */
export interface CommandHeader {
  readonly version: number;
  readonly kind: FrameKind;
  readonly keyId: number;
  readonly scope: number;
  /** 12 bytes; a view into the frame, not a copy. */
  readonly nonce: Buffer;
  /** Length of the ciphertext (frame length − 30), or of the clear body of
   * an ACCESS_SIGNED (frame length − 86). */
  readonly bodyLength: number;
}

export type HeaderResult =
  | { readonly ok: true; readonly header: CommandHeader }
  | { readonly ok: false; readonly status: typeof Status.MALFORMED | typeof Status.UNSUPPORTED_VERSION };

export type OpenResult =
  | {
      readonly ok: true;
      readonly command: OpenedCommand;
      /** index in `keys` of the key that opened it */ readonly keyIndex: number;
    }
  | {
      readonly ok: false;
      readonly status: typeof Status.MALFORMED | typeof Status.UNSUPPORTED_VERSION | typeof Status.AUTH_FAILED;
      /** The header when steps 1 and 2 passed, else null. */
      readonly header: CommandHeader | null;
    };

export function sealCommand(input: SealCommandInput): Buffer {
  const kind: number = input.kind;
  if (!isFrameKind(kind) || kind === FrameKind.ACCESS_SIGNED) {
    throw new ProtocolError(
      ProtocolErrorCode.BAD_INPUT,
      `kind must be 1, 2, 3, 5 or 6 (ACCESS_SIGNED is signed: signAccessCommand), got ${String(kind)}`,
    );
  }
  return sealRawCommand({
    key: input.key,
    kind,
    keyId: input.keyId,
    scope: input.scope,
    nonce: input.nonce,
    plaintext: encodeBody(kind, input.body ?? {}),
  });
}

/** Seals any plaintext under any kind byte, valid or not: for test tools
 * that need well-sealed frames with bad bodies (docs/protocol.md, step 5). */
export function sealRawCommand(input: {
  readonly key: Uint8Array;
  readonly kind: number;
  readonly keyId: number;
  readonly scope: number;
  readonly nonce?: Uint8Array | undefined;
  readonly plaintext: Uint8Array;
  readonly version?: number;
}): Buffer {
  requireLength('key', input.key, 16);
  const nonce = input.nonce ?? randomNonce();
  requireLength('nonce', nonce, NONCE_LENGTH);
  const plaintext = input.plaintext;
  const frame = Buffer.allocUnsafe(COMMAND_HEADER_LENGTH + plaintext.length + TAG_LENGTH);
  frame[CommandOffset.version] = requireU8('version', input.version ?? PROTOCOL_VERSION);
  frame[CommandOffset.kind] = requireU8('kind', input.kind);
  frame.writeUInt32BE(requireU32('keyId', input.keyId), CommandOffset.keyId);
  frame.writeUInt32BE(requireU32('scope', input.scope), CommandOffset.scope);
  frame.set(nonce, CommandOffset.nonce);
  // docs/protocol.md, Command frame: the AAD is bytes 0..21, the header with the nonce.
  const { ciphertext, tag } = ccmSeal(input.key, nonce, frame.subarray(0, COMMAND_HEADER_LENGTH), plaintext);
  frame.set(ciphertext, COMMAND_HEADER_LENGTH);
  frame.set(tag, COMMAND_HEADER_LENGTH + ciphertext.length);
  return frame;
}

/** docs/protocol.md, steps 1 and 2: version, known kind, at least the
 * kind's fixed part (30 bytes; 86 for ACCESS_SIGNED). */
export function parseCommandHeader(bytes: Uint8Array): HeaderResult {
  const frame = asBuffer(bytes);
  if (frame.length === 0) return { ok: false, status: Status.MALFORMED };
  if (frame[CommandOffset.version] !== PROTOCOL_VERSION) return { ok: false, status: Status.UNSUPPORTED_VERSION };
  const kind = frame[CommandOffset.kind] ?? 0;
  if (!isFrameKind(kind) || frame.length < minFrameLength(kind)) return { ok: false, status: Status.MALFORMED };
  return {
    ok: true,
    header: {
      version: PROTOCOL_VERSION,
      kind,
      keyId: frame.readUInt32BE(CommandOffset.keyId),
      scope: frame.readUInt32BE(CommandOffset.scope),
      nonce: frame.subarray(CommandOffset.nonce, CommandOffset.nonce + NONCE_LENGTH),
      bodyLength: frame.length - minFrameLength(kind),
    },
  };
}

/** docs/protocol.md, step 4: the first key under which the tag verifies,
 * with the plaintext; null when none does. */
export function authenticateCommand(
  bytes: Uint8Array,
  header: CommandHeader,
  keys: readonly Uint8Array[],
): { plaintext: Buffer; keyIndex: number } | null {
  const frame = asBuffer(bytes);
  const aad = frame.subarray(0, COMMAND_HEADER_LENGTH);
  const ciphertext = frame.subarray(COMMAND_HEADER_LENGTH, frame.length - TAG_LENGTH);
  const tag = frame.subarray(frame.length - TAG_LENGTH);
  for (let keyIndex = 0; keyIndex < keys.length; keyIndex++) {
    const key = keys[keyIndex];
    if (key === undefined) continue;
    const plaintext = ccmOpen(key, header.nonce, aad, ciphertext, tag);
    if (plaintext !== null) return { plaintext, keyIndex };
  }
  return null;
}

/** Opens a sealed command under `keys` (one key, or several tried in order,
 * e.g. parking_key then parking_key_next). Runs docs/protocol.md steps 1, 2, 4
 * and 5; scope (step 3) and the box's own checks belong to `decide`. An
 * ACCESS_SIGNED is AUTH_FAILED here (no AES key verifies a signature: use
 * openSignedCommand). Never throws. */
export function openCommand(bytes: Uint8Array, keys: Uint8Array | readonly Uint8Array[]): OpenResult {
  const parsed = parseCommandHeader(bytes);
  if (!parsed.ok) return { ok: false, status: parsed.status, header: null };
  const { header } = parsed;
  if (header.kind === FrameKind.ACCESS_SIGNED) return { ok: false, status: Status.AUTH_FAILED, header };
  const keyList: readonly Uint8Array[] = keys instanceof Uint8Array ? [keys] : keys;
  const opened = authenticateCommand(bytes, header, keyList);
  if (opened === null) return { ok: false, status: Status.AUTH_FAILED, header };
  const body = decodeBody(header.kind, opened.plaintext);
  if (body === null) return { ok: false, status: Status.MALFORMED, header };
  const command = {
    kind: header.kind,
    keyId: header.keyId,
    scope: header.scope,
    body,
    nonce: Buffer.from(header.nonce),
  } as OpenedCommand;
  return { ok: true, command, keyIndex: opened.keyIndex };
}
