// Response frames, box -> service (docs/protocol.md, Response frame): 24 bytes of
// fields and an 8-byte tag over them and the answered command's bytes 10..21.
import type { Barrier } from './constants.js';
import {
  COMMAND_HEADER_LENGTH,
  CommandOffset,
  Direction,
  NONCE_LENGTH,
  PROTOCOL_VERSION,
  RESPONSE_LENGTH,
  RESPONSE_SIGNED_LENGTH,
  ResponseOffset,
  Status,
  isBarrier,
  isStatus,
} from './constants.js';
import { asBuffer, requireLength, requireU16, requireU32, requireU8 } from './bytes.js';
import { timingSafeEqual } from 'node:crypto';
import { ccmTagOnly, ccmTagsOnly, ccmVerifyTagOnly } from './ccm.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';

/** The 24 authenticated bytes of a response, as fields. */
export interface ResponseFields {
  readonly status: Status;
  /** Kind of the command answered, 0 if it could not be parsed. */
  readonly kind: number;
  readonly moduleId: number;
  /** key_id of the command answered, 0 if it could not be parsed. */
  readonly keyId: number;
  readonly boxSeq: number;
  readonly boxTime: number;
  readonly batteryMv: number;
  readonly barrier: Barrier;
  readonly direction: Direction;
  /** Tries left, 0xFF when not applicable. */
  readonly remaining: number;
}

export interface ParsedResponse extends ResponseFields {
  readonly version: number;
  /** 8 bytes; a view into the frame. */
  readonly tag: Buffer;
}

const ZERO_COMMAND_NONCE = Buffer.alloc(NONCE_LENGTH);

/** docs/protocol.md, Response frame, offset 24: bytes 10..21 of the command as
 * received, or 12 zero bytes for a status report (null) or a command shorter
 * than 22 bytes. */
export function commandAadTail(commandBytes: Uint8Array | null): Buffer {
  if (commandBytes === null || commandBytes.length < COMMAND_HEADER_LENGTH) return ZERO_COMMAND_NONCE;
  return asBuffer(commandBytes).subarray(CommandOffset.nonce, COMMAND_HEADER_LENGTH);
}

/** nonce = module_id (4) || box_seq (4) || box_time (4). */
function responseNonce(frame: Buffer): Buffer {
  const nonce = Buffer.allocUnsafe(NONCE_LENGTH);
  frame.copy(nonce, 0, ResponseOffset.moduleId, ResponseOffset.moduleId + 4);
  frame.copy(nonce, 4, ResponseOffset.boxSeq, ResponseOffset.boxTime + 4);
  return nonce;
}

function responseAad(frame: Buffer, commandTail: Uint8Array): Buffer {
  const aad = Buffer.allocUnsafe(RESPONSE_SIGNED_LENGTH + NONCE_LENGTH);
  frame.copy(aad, 0, 0, RESPONSE_SIGNED_LENGTH);
  aad.set(commandTail, RESPONSE_SIGNED_LENGTH);
  return aad;
}

/** Writes the 24 field bytes into a new 32-byte frame (tag still unset). */
export function encodeResponseFields(fields: ResponseFields): Buffer {
  if (!isStatus(fields.status))
    throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `status ${String(fields.status)} is no status code`);
  if (!isBarrier(fields.barrier))
    throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `barrier ${String(fields.barrier)} is no barrier state`);
  const frame = Buffer.allocUnsafe(RESPONSE_LENGTH);
  frame[ResponseOffset.version] = PROTOCOL_VERSION;
  frame[ResponseOffset.status] = fields.status;
  frame[ResponseOffset.kind] = requireU8('kind', fields.kind);
  frame.writeUInt32BE(requireU32('moduleId', fields.moduleId), ResponseOffset.moduleId);
  frame.writeUInt32BE(requireU32('keyId', fields.keyId), ResponseOffset.keyId);
  frame.writeUInt32BE(requireU32('boxSeq', fields.boxSeq), ResponseOffset.boxSeq);
  frame.writeUInt32BE(requireU32('boxTime', fields.boxTime), ResponseOffset.boxTime);
  frame.writeUInt16BE(requireU16('batteryMv', fields.batteryMv), ResponseOffset.batteryMv);
  frame[ResponseOffset.barrier] = fields.barrier;
  frame[ResponseOffset.direction] = requireU8('direction', fields.direction);
  frame[ResponseOffset.remaining] = requireU8('remaining', fields.remaining);
  return frame;
}

/** Seals a response given the 12 bytes the AAD takes from the command
 * (its nonce). Test vectors carry exactly that `command_nonce`. */
export function sealResponseWithCommandNonce(
  fields: ResponseFields,
  boxKey: Uint8Array,
  commandNonce: Uint8Array,
): Buffer {
  requireLength('boxKey', boxKey, 16);
  requireLength('commandNonce', commandNonce, NONCE_LENGTH);
  const frame = encodeResponseFields(fields);
  const tag = ccmTagOnly(boxKey, responseNonce(frame), responseAad(frame, commandNonce));
  tag.copy(frame, ResponseOffset.tag);
  return frame;
}

/** Seals a response to `commandBytes` (null for a status report) under K_box. */
export function sealResponse(fields: ResponseFields, boxKey: Uint8Array, commandBytes: Uint8Array | null): Buffer {
  return sealResponseWithCommandNonce(fields, boxKey, commandAadTail(commandBytes));
}

/** True when `responseBytes` is a 32-byte version-1 response whose tag
 * verifies under `boxKey` for the command `commandBytes` (null: a status
 * report). The tag is recomputed and compared in constant time. Never throws. */
export function verifyResponse(
  responseBytes: Uint8Array,
  boxKey: Uint8Array,
  commandBytes: Uint8Array | null,
): boolean {
  if (responseBytes.length !== RESPONSE_LENGTH || boxKey.length !== 16) return false;
  const frame = asBuffer(responseBytes);
  if (frame[ResponseOffset.version] !== PROTOCOL_VERSION) return false;
  const aad = responseAad(frame, commandAadTail(commandBytes));
  return ccmVerifyTagOnly(boxKey, responseNonce(frame), aad, frame.subarray(ResponseOffset.tag));
}

/** One response to check with verifyResponses: its bytes and the command it
 * answers (null: a status report). */
export interface ResponseToVerify {
  readonly response: Uint8Array;
  readonly command: Uint8Array | null;
}

/** verifyResponse for many responses of one box (one key), in request order:
 * the same answers, at a fraction of the cost (ccmTagsOnly). Never throws. */
export function verifyResponses(items: readonly ResponseToVerify[], boxKey: Uint8Array): boolean[] {
  if (boxKey.length !== 16) return items.map(() => false);
  const wellFormed = items.map(
    ({ response }) => response.length === RESPONSE_LENGTH && response[ResponseOffset.version] === PROTOCOL_VERSION,
  );
  const frames = items
    .filter((_, i) => wellFormed[i])
    .map(({ response, command }) => ({ frame: asBuffer(response), command }));
  const tags = ccmTagsOnly(
    boxKey,
    frames.map(({ frame, command }) => ({
      nonce: responseNonce(frame),
      aad: responseAad(frame, commandAadTail(command)),
    })),
  );
  let next = 0;
  return wellFormed.map((ok) => {
    if (!ok) return false;
    const at = next++;
    const frame = frames[at]?.frame;
    const tag = tags[at];
    return frame !== undefined && tag !== undefined && timingSafeEqual(tag, frame.subarray(ResponseOffset.tag));
  });
}

/** Reads a response's fields without a key (the tag is NOT checked: call
 * verifyResponse before trusting them). Throws ProtocolError on a length
 * other than 32, a version other than 1, or an unknown status or barrier. */
export function parseResponse(bytes: Uint8Array): ParsedResponse {
  if (bytes.length !== RESPONSE_LENGTH) {
    throw new ProtocolError(
      ProtocolErrorCode.BAD_LENGTH,
      `a response frame is ${RESPONSE_LENGTH} bytes, got ${bytes.length}`,
    );
  }
  const frame = asBuffer(bytes);
  const version = frame[ResponseOffset.version] ?? 0;
  if (version !== PROTOCOL_VERSION)
    throw new ProtocolError(ProtocolErrorCode.UNSUPPORTED_VERSION, `response version ${version} is not 1`);
  const status = frame[ResponseOffset.status] ?? 0;
  if (!isStatus(status))
    throw new ProtocolError(ProtocolErrorCode.BAD_FIELD, `0x${status.toString(16)} is no status code`);
  const barrier = frame[ResponseOffset.barrier] ?? 0;
  if (!isBarrier(barrier)) throw new ProtocolError(ProtocolErrorCode.BAD_FIELD, `${barrier} is no barrier state`);
  const direction = frame[ResponseOffset.direction] ?? 0;
  if (direction !== Direction.CONTROL && direction !== Direction.ENTRANCE && direction !== Direction.EXIT) {
    throw new ProtocolError(ProtocolErrorCode.BAD_FIELD, `${direction} is no direction`);
  }
  return {
    version,
    status,
    kind: frame[ResponseOffset.kind] ?? 0,
    moduleId: frame.readUInt32BE(ResponseOffset.moduleId),
    keyId: frame.readUInt32BE(ResponseOffset.keyId),
    boxSeq: frame.readUInt32BE(ResponseOffset.boxSeq),
    boxTime: frame.readUInt32BE(ResponseOffset.boxTime),
    batteryMv: frame.readUInt16BE(ResponseOffset.batteryMv),
    barrier,
    direction,
    remaining: frame[ResponseOffset.remaining] ?? 0,
    tag: frame.subarray(ResponseOffset.tag, RESPONSE_LENGTH),
  };
}

/** A status report's fields (docs/protocol.md, Serial link framing, type 0x82). */
export function statusReportFields(
  moduleId: number,
  boxSeq: number,
  boxTime: number,
  batteryMv: number,
  barrier: Barrier,
  direction: Direction,
): ResponseFields {
  return {
    status: Status.OK,
    kind: 0,
    moduleId,
    keyId: 0,
    boxSeq,
    boxTime,
    batteryMv,
    barrier,
    direction,
    remaining: 0xff,
  };
}
