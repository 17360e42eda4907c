// ACCESS_SIGNED (docs/protocol.md, Command frame, second table): the 22-byte
// header, the ACCESS body in the clear, then an ECDSA P-256 / SHA-256
// signature over bytes 0..21+n as r || s (node's dsaEncoding 'ieee-p1363').
// Signatures are randomized and malleable: nothing here keys on their bytes.
import { sign, verify } from 'node:crypto';
import {
  COMMAND_HEADER_LENGTH,
  CommandOffset,
  FrameKind,
  NONCE_LENGTH,
  PROTOCOL_VERSION,
  SIGNATURE_LENGTH,
  Status,
} from './constants.js';
import { asBuffer, requireLength, requireU32, requireU8 } from './bytes.js';
import { type AccessBody, decodeAccessBody, encodeAccessBody } from './command-body.js';
import { type CommandHeader, type OpenResult, type OpenedCommand, parseCommandHeader } from './command.js';
import { type IssuerPrivateKey, issuerPrivateKeyObject, issuerPublicKeyObject } from './issuer-keys.js';
import { randomNonce } from './random-nonce.js';

const SIGN_OPTIONS = { dsaEncoding: 'ieee-p1363' } as const;

/** Input of signAccessCommand: the issuer's private key, the fields, and
 * optionally the 12-byte nonce (random when omitted). */
export interface SignAccessInput {
  readonly privateKey: IssuerPrivateKey;
  /** The smart key id. */
  readonly keyId: number;
  /** The secured_parking_id. */
  readonly scope: number;
  readonly nonce?: Uint8Array;
  readonly body: AccessBody;
}

/** Input of signRawCommand: any body bytes under any kind and version byte,
 * for test tools that need well-signed frames with bad bodies (step 5). */
export interface SignRawInput {
  readonly privateKey: IssuerPrivateKey;
  readonly kind?: number;
  readonly keyId: number;
  readonly scope: number;
  readonly nonce?: Uint8Array | undefined;
  readonly body: Uint8Array;
  readonly version?: number;
}

/** Header || body || signature, the signature made by `signer` over header || body. */
export function assembleSignedFrame(
  input: Omit<SignRawInput, 'privateKey'>,
  signer: (message: Buffer) => Uint8Array,
): Buffer {
  const nonce = input.nonce ?? randomNonce();
  requireLength('nonce', nonce, NONCE_LENGTH);
  const signedLength = COMMAND_HEADER_LENGTH + input.body.length;
  const frame = Buffer.allocUnsafe(signedLength + SIGNATURE_LENGTH);
  frame[CommandOffset.version] = requireU8('version', input.version ?? PROTOCOL_VERSION);
  frame[CommandOffset.kind] = requireU8('kind', input.kind ?? FrameKind.ACCESS_SIGNED);
  frame.writeUInt32BE(requireU32('keyId', input.keyId), CommandOffset.keyId);
  frame.writeUInt32BE(requireU32('scope', input.scope), CommandOffset.scope);
  frame.set(nonce, CommandOffset.nonce);
  frame.set(input.body, COMMAND_HEADER_LENGTH);
  const signature = signer(frame.subarray(0, signedLength));
  requireLength('signature', signature, SIGNATURE_LENGTH);
  frame.set(signature, signedLength);
  return frame;
}

/** docs/protocol.md, Command frame, ACCESS_SIGNED: sign bytes 0..21+n as r || s. */
export function signRawCommand(input: SignRawInput): Buffer {
  const key = issuerPrivateKeyObject(input.privateKey);
  return assembleSignedFrame(input, (message) => sign('sha256', message, { key, ...SIGN_OPTIONS }));
}

/** An ACCESS_SIGNED frame: the ACCESS body in the clear, signed by the issuer. */
export function signAccessCommand(input: SignAccessInput): Buffer {
  return signRawCommand({
    privateKey: input.privateKey,
    keyId: input.keyId,
    scope: input.scope,
    nonce: input.nonce,
    body: encodeAccessBody(input.body),
  });
}

/** docs/protocol.md, step 4 for ACCESS_SIGNED: the index in `issuerKeys`
 * of the first key under which the last 64 bytes are a valid signature of the
 * bytes before them; -1 when none is (null keys and bytes that are no point
 * never verify). Never throws. */
export function verifySignature(bytes: Uint8Array, issuerKeys: readonly (Uint8Array | null)[]): number {
  const frame = asBuffer(bytes);
  if (frame.length < SIGNATURE_LENGTH) return -1;
  const message = frame.subarray(0, frame.length - SIGNATURE_LENGTH);
  const signature = frame.subarray(frame.length - SIGNATURE_LENGTH);
  for (let index = 0; index < issuerKeys.length; index++) {
    const raw = issuerKeys[index];
    if (raw === null || raw === undefined) continue;
    try {
      if (verify('sha256', message, { key: issuerPublicKeyObject(raw), ...SIGN_OPTIONS }, signature)) return index;
    } catch {
      // Not a point on P-256, or a signature OpenSSL refuses to parse: not valid.
    }
  }
  return -1;
}

/** The body bytes of an ACCESS_SIGNED whose header parsed (in the clear: no key needed). */
export function signedBody(bytes: Uint8Array, header: CommandHeader): Buffer {
  return asBuffer(bytes).subarray(COMMAND_HEADER_LENGTH, COMMAND_HEADER_LENGTH + header.bodyLength);
}

/** Opens an ACCESS_SIGNED under `issuerKeys` (issuer_key, then
 * issuer_key_previous; a single key is fine). Runs docs/protocol.md steps 1, 2,
 * 4 and 5; any other kind is AUTH_FAILED here (it carries no signature).
 * Never throws. `keyIndex` is the index of the key that verified. */
export function openSignedCommand(
  bytes: Uint8Array,
  issuerKeys: Uint8Array | readonly (Uint8Array | null)[],
): OpenResult {
  const parsed = parseCommandHeader(bytes);
  if (!parsed.ok) return { ok: false, status: parsed.status, header: null };
  const { header } = parsed;
  if (header.kind !== FrameKind.ACCESS_SIGNED) return { ok: false, status: Status.AUTH_FAILED, header };
  const keyIndex = verifySignature(bytes, issuerKeys instanceof Uint8Array ? [issuerKeys] : issuerKeys);
  if (keyIndex < 0) return { ok: false, status: Status.AUTH_FAILED, header };
  const body = decodeAccessBody(signedBody(bytes, header));
  if (body === null) return { ok: false, status: Status.MALFORMED, header };
  const command: OpenedCommand = {
    kind: FrameKind.ACCESS_SIGNED,
    keyId: header.keyId,
    scope: header.scope,
    body,
    nonce: Buffer.from(header.nonce),
  };
  return { ok: true, command, keyIndex };
}
