// What the suite knows of the box from its provisioning file (docs/protocol.md,
// Provisioning file), and the commands it seals with those keys.
import { Direction, FrameKind, sealCommand } from '../firmware-protocol/index.js';
import type { SealedProvisioning } from '../simulator/provisioning.js';

export interface BoxUnderTest {
  readonly moduleId: number;
  readonly parkingId: number;
  /** Response byte 22 for ACCESS and unparsed frames (docs/protocol.md, Response frame). */
  readonly direction: typeof Direction.ENTRANCE | typeof Direction.EXIT;
  readonly parkingKey: Buffer;
  readonly boxKey: Buffer;
  readonly skewSeconds: number;
}

/** The suite seals its ACCESS commands under the parking key, so it takes a
 * box of a sealed parking (the version 2 cases, for signed boxes, are still
 * to come: issue 13). */
export function boxUnderTest(provisioning: SealedProvisioning): BoxUnderTest {
  return {
    moduleId: provisioning.moduleId,
    parkingId: provisioning.parkingId,
    direction: provisioning.direction === 'entrance' ? Direction.ENTRANCE : Direction.EXIT,
    parkingKey: provisioning.parkingKey,
    boxKey: provisioning.boxKey,
    skewSeconds: provisioning.skewSeconds,
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

export function accessCommand(box: BoxUnderTest, spec: AccessSpec): Buffer {
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: box.parkingKey,
    keyId: spec.keyId,
    scope: spec.scope ?? box.parkingId,
    body: { notBefore: spec.notBefore, notAfter: spec.notAfter, maxEntries: spec.tries, maxExits: spec.tries, moduleIds: spec.moduleIds ?? [box.moduleId] },
  });
}

export function batteryQuery(box: BoxUnderTest, controlSeq: number): Buffer {
  return sealCommand({ kind: FrameKind.BATTERY_QUERY, key: box.boxKey, keyId: controlSeq, scope: box.moduleId });
}

export function timeSet(box: BoxUnderTest, controlSeq: number, time: number): Buffer {
  return sealCommand({ kind: FrameKind.TIME_SET, key: box.boxKey, keyId: controlSeq, scope: box.moduleId, body: { time } });
}
