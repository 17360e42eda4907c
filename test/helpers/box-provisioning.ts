// A simulated box's provisioning for tests: fresh random keys, the fields of
// docs/protocol.md's example, and whatever the test overrides; and an ACCESS
// sealed under its K_park (signed-box.ts makes a signed parking's).
import { randomBytes } from 'node:crypto';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import type { Provisioning, SealedProvisioning } from '../../lib/provisioning-file.js';

/** A sealed parking's box (it holds K_park) unless the overrides say otherwise. */
export function testProvisioning<Overrides extends Partial<Provisioning>>(
  overrides: Overrides = {} as Overrides,
): SealedProvisioning & Overrides {
  return {
    moduleId: 9101,
    parkingId: 7,
    direction: 'entrance',
    macAddress: '00:07:80:AA:BB:01',
    parkingKey: randomBytes(16),
    parkingKeyNext: null,
    issuerKey: null,
    issuerKeyPrevious: null,
    boxKey: randomBytes(16),
    skewSeconds: 120,
    minBatteryMv: 3_300,
    mqtt: null,
    ...overrides,
  };
}

/** An ACCESS for a sealed parking's box, sealed under its K_park: valid from a minute before `nowSeconds` for an hour, `tries` entries and exits (5), for this box unless `moduleIds` says otherwise. */
export function sealedAccess(
  box: SealedProvisioning,
  options: { keyId?: number; nowSeconds: number; tries?: number; moduleIds?: readonly number[] },
): Buffer {
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: box.parkingKey,
    keyId: options.keyId ?? 42,
    scope: box.parkingId,
    body: {
      notBefore: options.nowSeconds - 60,
      notAfter: options.nowSeconds + 3_600,
      maxEntries: options.tries ?? 5,
      maxExits: options.tries ?? 5,
      moduleIds: [...(options.moduleIds ?? [box.moduleId])],
    },
  });
}
