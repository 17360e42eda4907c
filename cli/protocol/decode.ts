// `parkbench protocol decode`: turns bytes into a JSON description of the
// command, response or link frame they hold; an ACCESS_SIGNED shows its clear
// body and its signature, checked under --issuer-public-key when given.
// Detection by shape: bytes that end in the only 0x00 and pass COBS and CRC
// are a link frame; 32 bytes are a response (no command is 32 bytes long);
// anything else is a command.
import {
  type AccessBody,
  type CommandHeader,
  type LinkFrame,
  type OpenedCommand,
  FrameKind,
  LinkType,
  RESPONSE_LENGTH,
  SIGNATURE_LENGTH,
  barrierName,
  decodeLinkFrame,
  isProtocolError,
  issuerKeyFingerprint,
  kindName,
  linkTypeName,
  openCommand,
  parseCommandHeader,
  parseResponse,
  renderCommand,
  renderResponse,
  statusName,
  verifyResponse,
  verifySignature,
} from '../../firmware-protocol/index.js';
// Deep imports: the clear body of an ACCESS_SIGNED, read without a key (as render.ts does).
import { decodeAccessBody } from '../../firmware-protocol/command-body.js';
import { signedBody } from '../../firmware-protocol/signed-command.js';
import { CliError } from '../errors.js';

export type FrameShape = 'command' | 'response' | 'link';

export interface DecodeOptions {
  as?: FrameShape | undefined;
  /** Opens a command (K_park or K_box), or verifies a response (K_box). */
  key?: Buffer | undefined;
  /** The command a response answers, for its AAD. */
  command?: Buffer | undefined;
  /** Public keys (X || Y) that check an ACCESS_SIGNED's signature; any one may verify it. */
  issuerKeys?: readonly Buffer[] | undefined;
}

export interface DecodeOutcome {
  json: Record<string, unknown>;
  /** A line for stderr when the bytes decoded but did not check out (exit 1). */
  failure?: string;
}

export function detectShape(bytes: Buffer): FrameShape {
  if (bytes.length > 0 && bytes.indexOf(0) === bytes.length - 1) {
    try {
      decodeLinkFrame(bytes);
      return 'link';
    } catch {
      // not a valid link frame: try the other shapes
    }
  }
  return bytes.length === RESPONSE_LENGTH ? 'response' : 'command';
}

export function decodeFrame(bytes: Buffer, options: DecodeOptions): DecodeOutcome {
  const shape = options.as ?? detectShape(bytes);
  switch (shape) {
    case 'command':
      return decodeCommand(bytes, options);
    case 'response':
      return decodeResponse(bytes, options.key, options.command);
    case 'link':
      return decodeLink(bytes, options);
  }
}

function headerJson(header: CommandHeader): Record<string, unknown> {
  return {
    version: header.version,
    kind: header.kind,
    kind_name: kindName(header.kind),
    key_id: header.keyId,
    scope: header.scope,
    nonce: header.nonce.toString('hex'),
    body_length: header.bodyLength,
  };
}

function accessBodyJson(body: AccessBody): Record<string, unknown> {
  return {
    not_before: body.notBefore,
    not_after: body.notAfter,
    max_entries: body.maxEntries,
    max_exits: body.maxExits,
    module_count: body.moduleIds.length,
    module_ids: [...body.moduleIds],
  };
}

function bodyJson(command: OpenedCommand): Record<string, unknown> {
  switch (command.kind) {
    case FrameKind.ACCESS:
      return accessBodyJson(command.body);
    case FrameKind.BATTERY_QUERY:
      return {};
    case FrameKind.TIME_SET:
      return { time: command.body.time };
    // Protocol version 2 kinds (docs/protocol.md, Command frame, bodies). An ACCESS_SIGNED never
    // gets here from decodeCommand (decodeSigned shows it), but its body is an ACCESS body.
    case FrameKind.ACCESS_SIGNED:
      return accessBodyJson(command.body);
    case FrameKind.REVOKE:
      return { entries: command.body.entries.map((entry) => ({ key_id: entry.keyId, until: entry.until })) };
    case FrameKind.SET_ISSUER:
      return {
        issuer_key: Buffer.from(command.body.issuerKey).toString('hex'),
        issuer_key_previous:
          command.body.issuerKeyPrevious === null ? null : Buffer.from(command.body.issuerKeyPrevious).toString('hex'),
      };
  }
}

function decodeCommand(bytes: Buffer, options: DecodeOptions): DecodeOutcome {
  const parsed = parseCommandHeader(bytes);
  if (!parsed.ok)
    throw new CliError(`not a command frame: ${statusName(parsed.status) ?? 'MALFORMED'} (${bytes.length} bytes)`);
  const json: Record<string, unknown> = { frame: 'command', ...headerJson(parsed.header) };
  if (parsed.header.kind === FrameKind.ACCESS_SIGNED)
    return decodeSigned(bytes, parsed.header, json, options.issuerKeys);
  const key = options.key;
  if (key === undefined) return { json: { ...json, body: 'sealed', text: renderCommand(bytes) } };
  const opened = openCommand(bytes, key);
  if (!opened.ok) {
    const status = statusName(opened.status) ?? 'MALFORMED';
    return { json: { ...json, body: 'sealed', status }, failure: `command does not open under --key: ${status}` };
  }
  return { json: { ...json, body: bodyJson(opened.command), text: renderCommand(bytes, key) } };
}

/** docs/protocol.md, Command frame, ACCESS_SIGNED: the body is in the clear and
 * always shown; the signature (r || s) is checked only against the issuer
 * public keys given (--key does not apply: nothing is sealed). */
function decodeSigned(
  bytes: Buffer,
  header: CommandHeader,
  json: Record<string, unknown>,
  issuerKeys: readonly Buffer[] | undefined,
): DecodeOutcome {
  const signature = bytes.subarray(bytes.length - SIGNATURE_LENGTH);
  const body = decodeAccessBody(signedBody(bytes, header));
  const shown = {
    ...json,
    body: body === null ? 'MALFORMED' : accessBodyJson(body),
    signature: {
      r: signature.subarray(0, SIGNATURE_LENGTH / 2).toString('hex'),
      s: signature.subarray(SIGNATURE_LENGTH / 2).toString('hex'),
    },
  };
  // docs/protocol.md, step 5: a body that is no ACCESS body is MALFORMED, signed or not.
  const malformed =
    body === null
      ? { failure: `ACCESS_SIGNED body: MALFORMED (${header.bodyLength} bytes, not an ACCESS body of 1..32 modules)` }
      : {};
  if (issuerKeys === undefined)
    return {
      json: { ...shown, signature_check: 'not checked (no --issuer-public-key)', text: renderCommand(bytes) },
      ...malformed,
    };
  const index = verifySignature(bytes, issuerKeys);
  const verifiedBy = index < 0 ? undefined : issuerKeys[index];
  const checked = {
    ...shown,
    signature_check: verifiedBy === undefined ? 'INVALID' : `valid under issuer ${issuerKeyFingerprint(verifiedBy)}`,
    text: renderCommand(bytes, undefined, issuerKeys),
  };
  if (verifiedBy === undefined) {
    const tried = issuerKeys.map((key) => issuerKeyFingerprint(key)).join(', ');
    return { json: checked, failure: `signature: INVALID under --issuer-public-key ${tried}` };
  }
  return { json: checked, ...malformed };
}

function decodeResponse(bytes: Buffer, key: Buffer | undefined, command: Buffer | undefined): DecodeOutcome {
  let response;
  try {
    response = parseResponse(bytes);
  } catch (error) {
    if (isProtocolError(error)) throw new CliError(`not a response frame: ${error.message}`);
    throw error;
  }
  const json: Record<string, unknown> = {
    frame: 'response',
    version: response.version,
    status: response.status,
    status_name: statusName(response.status),
    kind: response.kind,
    kind_name: kindName(response.kind) ?? null,
    module_id: response.moduleId,
    key_id: response.keyId,
    box_seq: response.boxSeq,
    box_time: response.boxTime,
    box_time_iso: new Date(response.boxTime * 1000).toISOString(),
    battery_mv: response.batteryMv,
    barrier: response.barrier,
    barrier_name: barrierName(response.barrier),
    direction: response.direction,
    remaining: response.remaining,
    tag: response.tag.toString('hex'),
    text: renderResponse(bytes),
  };
  if (key === undefined) return { json };
  const verified = verifyResponse(bytes, key, command ?? null);
  const aad = command === undefined ? 'status report (no --command: 12 zero bytes)' : 'the --command given';
  const result = { json: { ...json, verified, verified_against: aad } };
  return verified ? result : { ...result, failure: `response tag does not verify under --key against ${aad}` };
}

function innerJson(frame: LinkFrame, options: DecodeOptions): DecodeOutcome | null {
  switch (frame.type) {
    case LinkType.COMMAND:
      return decodeCommand(frame.payload, options);
    case LinkType.RESPONSE:
      return decodeResponse(frame.payload, options.key, options.command);
    case LinkType.STATUS_REPORT:
      return decodeResponse(frame.payload, options.key, undefined);
    case LinkType.STATUS_REQUEST:
      return null;
  }
}

function decodeLink(bytes: Buffer, options: DecodeOptions): DecodeOutcome {
  let frame: LinkFrame;
  try {
    frame = decodeLinkFrame(bytes);
  } catch (error) {
    if (isProtocolError(error)) throw new CliError(`not a link frame: ${error.code}`);
    throw error;
  }
  const json: Record<string, unknown> = {
    frame: 'link',
    type: frame.type,
    type_name: linkTypeName(frame.type),
    payload: frame.payload.toString('hex'),
  };
  let inner: DecodeOutcome | null;
  try {
    inner = innerJson(frame, options);
  } catch (error) {
    if (error instanceof CliError)
      return { json: { ...json, inner: { error: error.message } }, failure: `link frame payload: ${error.message}` };
    throw error;
  }
  if (inner === null) return { json };
  return { json: { ...json, inner: inner.json }, ...(inner.failure === undefined ? {} : { failure: inner.failure }) };
}
