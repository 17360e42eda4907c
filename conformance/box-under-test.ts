// What the suite knows of the box from its provisioning file (docs/protocol.md,
// provisioning file), and the commands it makes with those keys: ACCESS
// sealed under K_park (when the box holds one), ACCESS_SIGNED under one of
// the suite's own test issuers, and control commands sealed under K_box.
import {
  Direction,
  FrameKind,
  sealCommand,
  signAccessCommand,
  type IssuerPrivateKey,
  type RevokeEntry,
} from '../firmware-protocol/index.js';
import type { Provisioning } from '../lib/provisioning-file.js';

/** The two issuer public keys a box holds (docs/protocol.md, Keys): what SET_ISSUER sets. */
export interface IssuerKeys {
  readonly issuerKey: Buffer | null;
  readonly issuerKeyPrevious: Buffer | null;
}

export interface BoxUnderTest {
  readonly moduleId: number;
  readonly parkingId: number;
  /** Response byte 22 for access kinds and unparsed frames (docs/protocol.md, Response frame). */
  readonly direction: typeof Direction.ENTRANCE | typeof Direction.EXIT;
  /** K_park; null on a box of a signed parking: the sealed ACCESS cases need it. */
  readonly parkingKey: Buffer | null;
  readonly boxKey: Buffer;
  readonly skewSeconds: number;
  /** The issuer keys the suite puts back when it ends (conformance/README.md,
   * readings): the provisioning file's, unless the operator names others. */
  readonly issuerKeys: IssuerKeys;
}

export function boxUnderTest(provisioning: Provisioning, issuerKeys?: IssuerKeys): BoxUnderTest {
  return {
    moduleId: provisioning.moduleId,
    parkingId: provisioning.parkingId,
    direction: provisioning.direction === 'entrance' ? Direction.ENTRANCE : Direction.EXIT,
    parkingKey: provisioning.parkingKey,
    boxKey: provisioning.boxKey,
    skewSeconds: provisioning.skewSeconds,
    issuerKeys: issuerKeys ?? {
      issuerKey: provisioning.issuerKey ?? null,
      issuerKeyPrevious: provisioning.issuerKeyPrevious ?? null,
    },
  };
}

export interface AccessSpec {
  readonly keyId: number;
  readonly notBefore: number;
  readonly notAfter: number;
  /** max_entries and max_exits alike, so the box's direction does not matter. */
  readonly tries: number;
  readonly moduleIds?: readonly number[];
  readonly scope?: number;
}

function accessBody(box: BoxUnderTest, spec: AccessSpec) {
  return {
    notBefore: spec.notBefore,
    notAfter: spec.notAfter,
    maxEntries: spec.tries,
    maxExits: spec.tries,
    moduleIds: spec.moduleIds ?? [box.moduleId],
  };
}

/** A sealed ACCESS under `key`, K_park by default (only cases that run on a box holding it). */
export function accessCommand(box: BoxUnderTest, spec: AccessSpec, key: Buffer | null = box.parkingKey): Buffer {
  if (key === null) throw new Error('a sealed ACCESS needs K_park: this box holds none');
  return sealCommand({
    kind: FrameKind.ACCESS,
    key,
    keyId: spec.keyId,
    scope: spec.scope ?? box.parkingId,
    body: accessBody(box, spec),
  });
}

/** An ACCESS_SIGNED by `issuer` (docs/protocol.md, Command frame, second table). */
export function signedAccessCommand(box: BoxUnderTest, issuer: IssuerPrivateKey, spec: AccessSpec): Buffer {
  return signAccessCommand({
    privateKey: issuer,
    keyId: spec.keyId,
    scope: spec.scope ?? box.parkingId,
    body: accessBody(box, spec),
  });
}

export function batteryQuery(box: BoxUnderTest, controlSeq: number): Buffer {
  return sealCommand({ kind: FrameKind.BATTERY_QUERY, key: box.boxKey, keyId: controlSeq, scope: box.moduleId });
}

export function timeSet(box: BoxUnderTest, controlSeq: number, time: number): Buffer {
  return sealCommand({
    kind: FrameKind.TIME_SET,
    key: box.boxKey,
    keyId: controlSeq,
    scope: box.moduleId,
    body: { time },
  });
}

export function revokeCommand(box: BoxUnderTest, controlSeq: number, entries: readonly RevokeEntry[]): Buffer {
  return sealCommand({
    kind: FrameKind.REVOKE,
    key: box.boxKey,
    keyId: controlSeq,
    scope: box.moduleId,
    body: { entries },
  });
}

export function setIssuerCommand(
  box: BoxUnderTest,
  controlSeq: number,
  keys: { issuerKey: Buffer; issuerKeyPrevious: Buffer | null },
): Buffer {
  return sealCommand({
    kind: FrameKind.SET_ISSUER,
    key: box.boxKey,
    keyId: controlSeq,
    scope: box.moduleId,
    body: keys,
  });
}
