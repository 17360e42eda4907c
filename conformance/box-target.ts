// What the suite needs from a link to a box, whatever the wire: send one
// command frame and get its response (or nothing) with the time it took, put
// garbage on the link, watch the barrier, close. Serial, BLE and MQTT each
// implement it (targets/); the cases never know which one they run on.
import type { Barrier } from '../firmware-protocol/index.js';

export type TargetKind = 'serial' | 'ble' | 'mqtt';

/** One command and what came back. */
export interface Exchange {
  readonly command: Buffer;
  /** The response frame, or null when none came in time (or the link was down). */
  readonly response: Buffer | null;
  /** Why there is no response. */
  readonly error?: 'timeout' | 'link_down';
  /** From sending the command to receiving the response (or giving up), ms. */
  readonly elapsedMs: number;
}

/** A barrier state the box showed: in a status report, the retained state
 * topic, or a response's barrier byte. */
export interface BarrierObservation {
  readonly barrier: Barrier;
  readonly at: number;
  readonly source: 'report' | 'state' | 'response';
}

export interface BoxTarget {
  readonly kind: TargetKind;
  /** Opens the link; rejects with a one-line reason when the box cannot be reached. */
  open(): Promise<void>;
  /** Sends one command frame and waits up to `timeoutMs` for its response. */
  exchange(command: Buffer, timeoutMs: number): Promise<Exchange>;
  /** Puts link-level garbage on the wire (bytes that are no frame, or no
   * command message): the box must drop it without answering. */
  sendGarbage(): Promise<void>;
  /** Called for every barrier state shown by status reports or the state topic. */
  onBarrier(listener: (observation: BarrierObservation) => void): void;
  /** Power-cycles the box and resolves once the link is back, for the case
   * "all of it survives a power cycle" (docs/protocol.md, the paragraph after the
   * checks). Absent when the target cannot: none of the command line's can
   * (serial, BLE and MQTT reach a box, they do not power it); a test
   * harness that runs the simulator in process can. */
  restart?(): Promise<void>;
  /** Why `restart` is absent, when there is more to say than that the
   * target cannot (a power switch that cannot be worked here): the
   * power-cycle case is skipped with it. */
  readonly cannotRestart?: string;
  /** Status reports whose tag did not verify under the box key (ignored). */
  readonly badReports: number;
  close(): Promise<void>;
}
