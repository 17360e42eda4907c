// What the API records of a box's MQTT traffic (docs/capture.md): each
// command message it publishes and each response message it receives, an
// MQTT message record followed by a record of the frame inside it. The API
// holds the keys of its boxes but records no opened record.
import { CaptureDirection, LinkCapture } from '../../lib/capture/link-capture.js';
import { MessageError, parseResponseMessage } from '../../lib/mqtt-messages.js';
import type { CaptureRing } from './capture-ring.js';

/** Recorded as the interfaces' `if_description`. */
const RECORDED_BY = 'parkbench api';

export class MqttCapture {
  readonly #link: LinkCapture;

  /** `brokerUrl`: the broker the API publishes to and hears from; the
   * interface's name shows it without a user name or password. */
  constructor(ring: CaptureRing, brokerUrl: string) {
    this.#link = new LinkCapture(ring, 'mqtt', withoutCredentials(brokerUrl), {
      description: RECORDED_BY,
      nowMicros: () => BigInt(ring.nowMicros()),
    });
    ring.describe({ name: this.#link.interfaceName, description: RECORDED_BY });
  }

  /** A command message published to the box, and its command frame. */
  command(moduleId: number, topic: string, payload: string, frame: Uint8Array): void {
    this.#link.message(CaptureDirection.toBox, topic, Buffer.from(payload), moduleId);
    this.#link.frame(CaptureDirection.toBox, frame, moduleId);
  }

  /** A response message from the box, and its response frame when it holds one
   * (a message that does not parse, or says the box did not answer, has none). */
  response(moduleId: number, topic: string, payload: Buffer): void {
    this.#link.message(CaptureDirection.fromBox, topic, payload, moduleId);
    const frame = responseFrameOf(payload);
    if (frame !== undefined) this.#link.frame(CaptureDirection.fromBox, frame, moduleId);
  }
}

function responseFrameOf(payload: Buffer): Buffer | undefined {
  try {
    const { response } = parseResponseMessage(payload);
    return response === null ? undefined : Buffer.from(response, 'base64');
  } catch (error) {
    if (error instanceof MessageError) return undefined;
    throw error;
  }
}

function withoutCredentials(brokerUrl: string): string {
  try {
    const url = new URL(brokerUrl);
    if (url.username === '' && url.password === '') return brokerUrl;
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return brokerUrl;
  }
}
