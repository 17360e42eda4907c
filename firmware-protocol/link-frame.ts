// Serial link frames (docs/protocol.md, Serial link framing): type || payload ||
// CRC-16 (big-endian, over type || payload), COBS-encoded, then one 0x00.
import { MAX_LINK_ENCODED_LENGTH, type LinkType, isLinkType } from './constants.js';
import { cobsDecode, cobsEncodeInto, cobsMaxEncodedLength } from './cobs.js';
import { crc16 } from './crc16.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';

export interface LinkFrame {
  readonly type: LinkType;
  readonly payload: Buffer;
}

/** The smallest decoded link frame: a type byte and the CRC. */
const MIN_RAW_LENGTH = 3;

/** Encodes a link frame, trailing 0x00 delimiter included. */
export function encodeLinkFrame(type: LinkType, payload: Uint8Array): Buffer {
  if (!isLinkType(type))
    throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, `link type 0x${Number(type).toString(16)} is not defined`);
  const raw = Buffer.allocUnsafe(1 + payload.length + 2);
  raw[0] = type;
  raw.set(payload, 1);
  raw.writeUInt16BE(crc16(raw, 0, 1 + payload.length), 1 + payload.length);
  const out = Buffer.allocUnsafe(cobsMaxEncodedLength(raw.length) + 1);
  const end = cobsEncodeInto(raw, out, 0);
  out[end] = 0x00;
  const frame = out.subarray(0, end + 1);
  if (frame.length > MAX_LINK_ENCODED_LENGTH + 1) {
    throw new ProtocolError(
      ProtocolErrorCode.OVERSIZE,
      `link frame of ${frame.length} bytes exceeds ${MAX_LINK_ENCODED_LENGTH + 1}`,
    );
  }
  return frame;
}

export type LinkDecodeFailure =
  | typeof ProtocolErrorCode.BAD_COBS
  | typeof ProtocolErrorCode.BAD_CRC
  | typeof ProtocolErrorCode.OVERSIZE
  | typeof ProtocolErrorCode.UNKNOWN_LINK_TYPE;

/** Decodes the encoded bytes between two delimiters; returns the frame or
 * the reason it is dropped. Never throws. */
export function tryDecodeLinkFrame(
  encoded: Uint8Array,
  start = 0,
  end = encoded.length,
): LinkFrame | LinkDecodeFailure {
  if (end - start > MAX_LINK_ENCODED_LENGTH) return ProtocolErrorCode.OVERSIZE;
  const raw = cobsDecode(encoded, start, end);
  if (raw === null) return ProtocolErrorCode.BAD_COBS;
  if (raw.length < MIN_RAW_LENGTH) return ProtocolErrorCode.BAD_CRC;
  const crcOffset = raw.length - 2;
  if (crc16(raw, 0, crcOffset) !== raw.readUInt16BE(crcOffset)) return ProtocolErrorCode.BAD_CRC;
  const type = raw[0] ?? 0;
  if (!isLinkType(type)) return ProtocolErrorCode.UNKNOWN_LINK_TYPE;
  return { type, payload: raw.subarray(1, crcOffset) };
}

/** Decodes one link frame, with or without its trailing 0x00. Throws
 * ProtocolError (BAD_COBS, BAD_CRC, OVERSIZE, UNKNOWN_LINK_TYPE). */
export function decodeLinkFrame(bytes: Uint8Array): LinkFrame {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0 ? bytes.length - 1 : bytes.length;
  const result = tryDecodeLinkFrame(bytes, 0, end);
  if (typeof result === 'string') throw new ProtocolError(result, `not a link frame: ${result}`);
  return result;
}
