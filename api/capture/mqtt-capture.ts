// What the API records of a box's MQTT traffic (docs/capture.md): each
// command message it publishes and each response message it receives, an
// MQTT message record followed by a record of the frame inside it. The API
// holds the keys of its boxes but records no opened record.
//
// Every response the API ingests passes here, so a record is written
// straight into the ring's slab (CaptureRing.append): no record object, no
// copy of the message but the one into the slab, and the message as
// ingestion parsed it (no second parse).
import { brokerName } from '../../lib/capture/mqtt-capture.js';
import { CaptureDirection, CaptureLink, RecordKind } from '../../lib/capture/record.js';
import type { ReceivedResponseMessage } from '../../lib/mqtt-messages.js';
import type { CaptureRing, RecordFields } from './capture-ring.js';

/** Recorded as the interfaces' `if_description`. */
const RECORDED_BY = 'parkbench api';

type Fields = { -readonly [K in keyof RecordFields]: RecordFields[K] };

export class MqttCapture {
  readonly #ring: CaptureRing;
  readonly #interfaceId: number;
  /** The header of the record being written, set before each. */
  readonly #fields: Fields = {
    link: CaptureLink.mqtt,
    direction: CaptureDirection.toBox,
    kind: RecordKind.message,
    moduleId: 0,
    notAFrame: false,
  };

  /** `brokerUrl`: the broker the API publishes to and hears from; the
   * interface (`mqtt:<broker URL>`) shows it without a user name or password. */
  constructor(ring: CaptureRing, brokerUrl: string) {
    this.#ring = ring;
    this.#interfaceId = ring.describe({ name: `mqtt:${brokerName(brokerUrl)}`, description: RECORDED_BY });
  }

  /** A command message published to the box, and its command frame. */
  command(moduleId: number, topic: string, payload: string, frame: Uint8Array): void {
    this.#record(CaptureDirection.toBox, RecordKind.message, moduleId, payload, topic);
    this.#record(CaptureDirection.toBox, RecordKind.frame, moduleId, frame);
  }

  /** A response message from the box, and its response frame when it holds
   * one: `message` is the payload parsed (lib/mqtt-messages.ts,
   * parseResponseMessage); one that does not parse (undefined), or says the
   * box did not answer, has none. */
  response(
    moduleId: number,
    topic: string,
    payload: Buffer,
    message: Pick<ReceivedResponseMessage, 'response'> | undefined,
  ): void {
    this.#record(CaptureDirection.fromBox, RecordKind.message, moduleId, payload, topic);
    const response = message?.response;
    if (typeof response === 'string')
      this.#record(CaptureDirection.fromBox, RecordKind.frame, moduleId, Buffer.from(response, 'base64'));
  }

  #record(
    direction: CaptureDirection,
    kind: RecordKind,
    moduleId: number,
    data: Uint8Array | string,
    topic?: string,
  ): void {
    const fields = this.#fields;
    fields.direction = direction;
    fields.kind = kind;
    fields.moduleId = moduleId;
    this.#ring.append(this.#interfaceId, fields, data, topic);
  }
}
