// A signed parking's box for tests (docs/protocol.md, version 2): no K_park, an
// issuer public key in its provisioning, and the commands the service sends
// it, made with the real protocol library: ACCESS_SIGNED under the issuer's
// private key, REVOKE and SET_ISSUER sealed under K_box.
import {
  FrameKind,
  generateIssuerKeyPair,
  sealCommand,
  signAccessCommand,
  type RevokeEntry,
} from '../../firmware-protocol/index.js';
import type { Provisioning } from '../../lib/provisioning-file.js';
import { testProvisioning } from './box-provisioning.js';

export interface IssuerKeyPair {
  readonly privateKey: Buffer;
  readonly publicKey: Buffer;
}

export function newIssuer(): IssuerKeyPair {
  return generateIssuerKeyPair();
}

/** A box of a signed parking: parking_key null, issuer_key set. */
export function signedProvisioning(issuer: IssuerKeyPair, overrides: Partial<Provisioning> = {}): Provisioning {
  return {
    ...testProvisioning(),
    parkingKey: null,
    issuerKey: issuer.publicKey,
    issuerKeyPrevious: null,
    ...overrides,
  };
}

/** The largest modules list (32 entries, docs/protocol.md, Sizes), this box first. */
export function thirtyTwoModules(moduleId: number): number[] {
  return [moduleId, ...Array.from({ length: 31 }, (_, index) => 50_000 + index)];
}

export function signedAccess(
  box: Provisioning,
  issuer: IssuerKeyPair,
  options: { keyId?: number; nowSeconds: number; tries?: number; notAfter?: number; moduleIds?: readonly number[] },
): Buffer {
  return signAccessCommand({
    privateKey: issuer.privateKey,
    keyId: options.keyId ?? 42,
    scope: box.parkingId,
    body: {
      notBefore: options.nowSeconds - 60,
      notAfter: options.notAfter ?? options.nowSeconds + 3_600,
      maxEntries: options.tries ?? 5,
      maxExits: options.tries ?? 5,
      moduleIds: [...(options.moduleIds ?? [box.moduleId])],
    },
  });
}

export function revoke(box: Provisioning, controlSeq: number, entries: readonly RevokeEntry[]): Buffer {
  return sealCommand({
    key: box.boxKey,
    kind: FrameKind.REVOKE,
    keyId: controlSeq,
    scope: box.moduleId,
    body: { entries },
  });
}

export function setIssuer(
  box: Provisioning,
  controlSeq: number,
  issuerKey: Uint8Array,
  issuerKeyPrevious: Uint8Array | null,
): Buffer {
  return sealCommand({
    key: box.boxKey,
    kind: FrameKind.SET_ISSUER,
    keyId: controlSeq,
    scope: box.moduleId,
    body: { issuerKey, issuerKeyPrevious },
  });
}
