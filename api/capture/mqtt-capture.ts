// What the API records of a box's MQTT traffic (docs/capture.md): each
// command message it publishes and each response message it receives, an
// MQTT message record followed by a record of the frame inside it. The API
// holds the keys of its boxes but records no opened record.
//
// Every response the API ingests passes here, so a record is written
// straight into the ring's slab (CaptureRing.append): no record object, no
// copy of the message but the one into the slab.
import { CaptureDirection, CaptureLink, RecordKind } from '../../lib/capture/record.js';
import { isBase64 } from '../../lib/mqtt-messages.js';
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
    this.#interfaceId = ring.describe({ name: `mqtt:${withoutCredentials(brokerUrl)}`, description: RECORDED_BY });
  }

  /** A command message published to the box, and its command frame. */
  command(moduleId: number, topic: string, payload: string, frame: Uint8Array): void {
    this.#record(CaptureDirection.toBox, RecordKind.message, moduleId, payload, topic);
    this.#record(CaptureDirection.toBox, RecordKind.frame, moduleId, frame);
  }

  /** A response message from the box, and its response frame when it holds one
   * (a message that does not parse, or says the box did not answer, has none). */
  response(moduleId: number, topic: string, payload: Buffer): void {
    this.#record(CaptureDirection.fromBox, RecordKind.message, moduleId, payload, topic);
    const frame = responseFrameOf(payload);
    if (frame !== undefined) this.#record(CaptureDirection.fromBox, RecordKind.frame, moduleId, frame);
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

/** The response frame of a response message: its `response`, base64. Not
 * the full check ingestion makes (lib/mqtt-messages.ts, parseResponseMessage):
 * a message it refuses is recorded too, with the frame it carries. */
function responseFrameOf(payload: Buffer): Buffer | undefined {
  let document: unknown;
  try {
    document = JSON.parse(payload.toString());
  } catch {
    return undefined;
  }
  const response =
    typeof document === 'object' && document !== null ? (document as { response?: unknown }).response : undefined;
  return typeof response === 'string' && isBase64(response) ? Buffer.from(response, 'base64') : undefined;
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
