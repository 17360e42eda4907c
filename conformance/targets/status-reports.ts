// Status reports (docs/protocol.md, Serial link framing, type 0x82; BLE link):
// trusted only when their tag verifies under K_box with 12 zero bytes of
// command AAD. Shared by the serial and BLE targets.
import { parseResponse, verifyResponse } from '../../firmware-protocol/index.js';
import type { BarrierObservation } from '../box-target.js';

/** The barrier a verified status report shows, or null for a report whose
 * tag does not verify or that does not parse. */
export function reportedBarrier(frame: Buffer, boxKey: Uint8Array, at: number): BarrierObservation | null {
  if (!verifyResponse(frame, boxKey, null)) return null;
  try {
    return { barrier: parseResponse(frame).barrier, at, source: 'report' };
  } catch {
    return null;
  }
}
