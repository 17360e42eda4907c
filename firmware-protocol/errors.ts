// The one error type of firmware-protocol. Decoders that cannot return a
// protocol status (parseResponse, link frames, the CLI-facing helpers) throw
// it; nothing in this folder throws anything else on bad bytes.

export const ProtocolErrorCode = {
  /** A response frame is not 32 bytes. */
  BAD_LENGTH: 'BAD_LENGTH',
  /** A version byte other than 0x01. */
  UNSUPPORTED_VERSION: 'UNSUPPORTED_VERSION',
  /** A field holds a value the protocol does not define (kind, status, barrier, ...). */
  BAD_FIELD: 'BAD_FIELD',
  /** A value given to an encoder is out of range (not a u32, 33 modules, a 15-byte key, ...). */
  BAD_INPUT: 'BAD_INPUT',
  /** Serial link: bad COBS encoding. */
  BAD_COBS: 'BAD_COBS',
  /** Serial link: the CRC does not match, or the frame is too short to hold one. */
  BAD_CRC: 'BAD_CRC',
  /** Serial link: longer than docs/protocol.md, Sizes, allows. */
  OVERSIZE: 'OVERSIZE',
  /** Serial link: a type byte the protocol does not define. */
  UNKNOWN_LINK_TYPE: 'UNKNOWN_LINK_TYPE',
  /** A box's state cannot take one more response (box_seq at 0xFFFFFFFF). */
  BOX_SEQ_EXHAUSTED: 'BOX_SEQ_EXHAUSTED',
} as const;
export type ProtocolErrorCode = (typeof ProtocolErrorCode)[keyof typeof ProtocolErrorCode];

export class ProtocolError extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export function isProtocolError(error: unknown): error is ProtocolError {
  return error instanceof ProtocolError;
}
