// A simulated box's provisioning for tests: fresh random keys, the fields of
// PROTOCOL.md's example, and whatever the test overrides.
import { randomBytes } from 'node:crypto';
import type { Provisioning } from '../../simulator/provisioning.js';

export function testProvisioning(overrides: Partial<Provisioning> = {}): Provisioning {
  return {
    moduleId: 9101,
    parkingId: 7,
    direction: 'entrance',
    macAddress: '00:07:80:AA:BB:01',
    parkingKey: randomBytes(16),
    parkingKeyNext: null,
    boxKey: randomBytes(16),
    skewSeconds: 120,
    minBatteryMv: 3_300,
    mqtt: null,
    ...overrides,
  };
}
