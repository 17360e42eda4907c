// A simulated box's link recorded from the box's side (docs/capture.md): the
// link's own records (wire bytes, chunks, messages, frames) through its
// LinkCapture, and after each frame the box reads or sends, the opened
// record of what the box holds the keys to read in it. Never a key.
import type { BoxKeys } from '../../lib/capture/opened.js';
import { OpenedOutcome, openedCommandData, openedResponseData } from '../../lib/capture/opened.js';
import { CaptureDirection, type LinkCapture } from '../../lib/capture/link-capture.js';
import type { SimulatedBox } from '../simulated-box.js';

/** The interface description of every link the simulator records. */
export const SIM_CAPTURE_DESCRIPTION = 'parkbench sim';

export class BoxCapture {
  constructor(
    readonly link: LinkCapture,
    readonly box: SimulatedBox,
  ) {}

  /** After a command frame's record: what the box reads in it (nothing when
   * its header does not parse). */
  openedCommand(frame: Uint8Array): void {
    const data = openedCommandData(frame, this.#keys());
    if (data !== null) this.link.opened(CaptureDirection.toBox, data, this.box.moduleId);
  }

  /** After a response frame's record: whether its tag verifies under the box
   * key for `command` (null: a status report). A status report is the box's
   * own, sealed a moment ago under that key and never corrupted (`--corrupt`
   * flips bits of responses only): it verifies without checking again. */
  openedResponse(response: Uint8Array, command: Uint8Array | null): void {
    const data =
      command === null
        ? Buffer.from([response[2] ?? 0, OpenedOutcome.opened])
        : openedResponseData(response, this.box.config.boxKey, command);
    this.link.opened(CaptureDirection.fromBox, data, this.box.moduleId);
  }

  /** The keys the box holds now: its parking keys, its box key, and the
   * issuer keys of its state (SET_ISSUER replaces them). */
  #keys(): BoxKeys {
    const { parkingKey, parkingKeyNext, boxKey } = this.box.config;
    return {
      parkingKeys: [parkingKey, parkingKeyNext].filter((key) => key !== null),
      boxKey,
      issuerKeys: [this.box.state.issuerKey, this.box.state.issuerKeyPrevious],
    };
  }
}
