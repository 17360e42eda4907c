// Shared fixtures for the protocol tests: a box (entrance, module 101 of
// parking 7), its keys, and helpers that seal commands for it.
import {
  type AccessBody,
  Barrier,
  type BoxConditions,
  type BoxConfig,
  type BoxState,
  FrameKind,
  type RevokeEntry,
  issuerPublicKeyOf,
  sealCommand,
  signAccessCommand,
} from '../../firmware-protocol/index.js';

export const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z
export const HOUR = 3600;

export const parkingKey = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
export const parkingKeyNext = Buffer.from('101112131415161718191a1b1c1d1e1f', 'hex');
export const boxKey = Buffer.from('a0a1a2a3a4a5a6a7a8a9aaabacadaeaf', 'hex');
export const otherKey = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');

export const config: BoxConfig = {
  moduleId: 101,
  parkingId: 7,
  direction: 'entrance',
  parkingKey,
  parkingKeyNext: null,
  boxKey,
  skewSeconds: 120,
  minBatteryMv: 3300,
};

/** Issuer private keys (scalars) and their public keys X || Y. */
export const issuerPrivate = Buffer.from('0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20', 'hex');
export const issuerPublic = issuerPublicKeyOf(issuerPrivate);
export const otherIssuerPrivate = Buffer.from(
  '4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60',
  'hex',
);
export const otherIssuerPublic = issuerPublicKeyOf(otherIssuerPrivate);

/** The box holds `issuerPublic` as issuer_key, no previous key, no revocations. */
export const state: BoxState = {
  boxSeq: 10,
  lastControlSeq: 5,
  tries: new Map(),
  issuerKey: issuerPublic,
  issuerKeyPrevious: null,
  revocations: new Map(),
};

export const conditions: BoxConditions = { boxTime: T0 + 60, batteryMv: 3700, barrier: Barrier.CLOSED, jammed: false };

export const body: AccessBody = {
  notBefore: T0,
  notAfter: T0 + 2 * HOUR,
  maxEntries: 2,
  maxExits: 1,
  moduleIds: [101, 102],
};

export function access(
  overrides: { body?: Partial<AccessBody>; keyId?: number; scope?: number; key?: Uint8Array } = {},
): Buffer {
  return sealCommand({
    key: overrides.key ?? parkingKey,
    kind: FrameKind.ACCESS,
    keyId: overrides.keyId ?? 42,
    scope: overrides.scope ?? 7,
    body: { ...body, ...overrides.body },
  });
}

export function timeSet(seq: number, overrides: { time?: number; scope?: number; key?: Uint8Array } = {}): Buffer {
  return sealCommand({
    key: overrides.key ?? boxKey,
    kind: FrameKind.TIME_SET,
    keyId: seq,
    scope: overrides.scope ?? 101,
    body: { time: overrides.time ?? T0 + HOUR },
  });
}

export function batteryQuery(seq: number, overrides: { scope?: number; key?: Uint8Array } = {}): Buffer {
  return sealCommand({
    key: overrides.key ?? boxKey,
    kind: FrameKind.BATTERY_QUERY,
    keyId: seq,
    scope: overrides.scope ?? 101,
  });
}

export function flipBit(bytes: Uint8Array, bit: number): Buffer {
  const copy = Buffer.from(bytes);
  const index = bit >> 3;
  copy[index] = (copy[index] ?? 0) ^ (1 << (bit & 7));
  return copy;
}

export function signedAccess(
  overrides: {
    body?: Partial<AccessBody>;
    keyId?: number;
    scope?: number;
    privateKey?: Uint8Array;
    nonce?: Uint8Array;
  } = {},
): Buffer {
  return signAccessCommand({
    privateKey: overrides.privateKey ?? issuerPrivate,
    keyId: overrides.keyId ?? 42,
    scope: overrides.scope ?? 7,
    ...(overrides.nonce === undefined ? {} : { nonce: overrides.nonce }),
    body: { ...body, ...overrides.body },
  });
}

export function revoke(
  seq: number,
  entries: readonly RevokeEntry[],
  overrides: { scope?: number; key?: Uint8Array } = {},
): Buffer {
  return sealCommand({
    key: overrides.key ?? boxKey,
    kind: FrameKind.REVOKE,
    keyId: seq,
    scope: overrides.scope ?? 101,
    body: { entries },
  });
}

export function setIssuer(
  seq: number,
  issuerKey: Uint8Array,
  issuerKeyPrevious: Uint8Array | null,
  overrides: { scope?: number; key?: Uint8Array } = {},
): Buffer {
  return sealCommand({
    key: overrides.key ?? boxKey,
    kind: FrameKind.SET_ISSUER,
    keyId: seq,
    scope: overrides.scope ?? 101,
    body: { issuerKey, issuerKeyPrevious },
  });
}
