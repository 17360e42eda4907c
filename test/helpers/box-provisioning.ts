// A simulated box's provisioning for tests: fresh random keys, the fields of
// docs/protocol.md's example, and whatever the test overrides.
import { randomBytes } from 'node:crypto';
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
