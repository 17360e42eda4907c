// Public API of firmware-protocol: the box protocol of docs/protocol.md (version 2), as pure
// code (node:crypto only; no I/O, timers or logging).
export {
  PROTOCOL_VERSION,
  FrameKind,
  Status,
  Barrier,
  Direction,
  LinkType,
  REMAINING_NOT_APPLICABLE,
  DEFAULT_SKEW_SECONDS,
  U8_MAX,
  U16_MAX,
  U32_MAX,
  CommandOffset,
  AccessBodyOffset,
  ACCESS_FIXED_BODY_LENGTH,
  ResponseOffset,
  KEY_LENGTH,
  NONCE_LENGTH,
  TAG_LENGTH,
  MIN_COMMAND_LENGTH,
  MIN_SIGNED_COMMAND_LENGTH,
  MAX_COMMAND_LENGTH,
  MAX_SEALED_COMMAND_LENGTH,
  SIGNATURE_LENGTH,
  ISSUER_PUBLIC_KEY_LENGTH,
  ISSUER_PRIVATE_KEY_LENGTH,
  MAX_REVOKE_ENTRIES,
  REVOCATION_LIST_CAPACITY,
  MAX_MODULES,
  RESPONSE_LENGTH,
  MAX_LINK_FRAME_LENGTH,
  MAX_LINK_ENCODED_LENGTH,
  kindName,
  statusName,
  barrierName,
  linkTypeName,
  isFrameKind,
  isStatus,
  isBarrier,
  isLinkType,
  isControlKind,
  isAccessKind,
  minFrameLength,
} from './constants.js';
export type { FrameKindName, StatusName, BarrierName, LinkTypeName } from './constants.js';
export { ProtocolError, ProtocolErrorCode, isProtocolError } from './errors.js';
export type {
  AccessBody,
  BatteryQueryBody,
  TimeSetBody,
  RevokeBody,
  RevokeEntry,
  SetIssuerBody,
  BodyOfKind,
} from './command-body.js';
export { sealCommand, sealRawCommand, openCommand, parseCommandHeader } from './command.js';
export type {
  CommandFields,
  AccessCommandFields,
  SignedAccessCommandFields,
  SealedKind,
  SealedCommandFields,
  SealCommandInput,
  OpenedCommand,
  CommandHeader,
  HeaderResult,
  OpenResult,
} from './command.js';
export { signAccessCommand, signRawCommand, openSignedCommand, verifySignature } from './signed-command.js';
export type { SignAccessInput, SignRawInput } from './signed-command.js';
export {
  generateIssuerKeyPair,
  issuerPublicKeyOf,
  isIssuerPublicKey,
  issuerKeyFingerprint,
  issuerPrivateKeyObject,
  issuerPublicKeyObject,
} from './issuer-keys.js';
export type { IssuerPrivateKey } from './issuer-keys.js';
export { isRevoked, applyRevoke } from './revocation.js';
export type { RevocationList } from './revocation.js';
export {
  sealResponse,
  sealResponseWithCommandNonce,
  verifyResponse,
  verifyResponses,
  parseResponse,
  commandAadTail,
} from './response.js';
export type { ResponseFields, ParsedResponse, ResponseToVerify } from './response.js';
export { initialBoxState, forgetExpiredTries } from './box.js';
export type { BoxConfig, BoxState, BoxConditions, BoxDirection, KeyTries } from './box.js';
export { decide, statusReport } from './decide.js';
export { echoIsAuthenticated } from './answer-trust.js';
export type { Decision, Effect, StatusReport } from './decide.js';
export { crc16 } from './crc16.js';
export { cobsEncode, cobsDecode } from './cobs.js';
export { encodeLinkFrame, decodeLinkFrame, tryDecodeLinkFrame } from './link-frame.js';
export type { LinkFrame, LinkDecodeFailure } from './link-frame.js';
export { LinkFrameDecoder } from './link-decoder.js';
export type { LinkDecoderCounters } from './link-decoder.js';
export { BleUuid, bleLocalName, chunkFrame, BleReassembler, MIN_BLE_MTU, MAX_CHUNKS } from './ble.js';
export type { BleReassemblerCounters } from './ble.js';
export { renderCommand, renderResponse, isoSeconds } from './render.js';
export { generateTestVectors, testVectorsJson, VECTOR_KEYS } from './vectors.js';
export type { TestVectors } from './vector-format.js';
