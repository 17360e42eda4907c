// Where capture records go: a pcapng file (capture-file.ts), or the API's
// ring of each box's last minutes. A link records through a LinkCapture
// (link-capture.ts) and never learns which.
import type { CaptureRecord } from './record.js';

/** One link as a pcapng interface: its name says which link and port
 * (`serial:/dev/ttyUSB0`, `ble:PB-9101`, `mqtt:mqtt://127.0.0.1:1883`). */
export interface CaptureInterface {
  readonly name: string;
  readonly description?: string;
}

export interface CaptureSink {
  /** Records one packet. Never throws: a sink that cannot write stops
   * recording and says so once, and the link goes on. */
  record(link: CaptureInterface, timestampMicros: bigint, record: CaptureRecord): void;
}

/** Microseconds since the Unix epoch, from the process's monotonic clock
 * (performance.now over timeOrigin), so records of one run never go back. */
export function processMicros(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}
