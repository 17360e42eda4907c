// An MQTT link's records (docs/capture.md): each command message received
// and each response message published, as a message record, then the frame
// inside it (a command message's `command`, a response message's
// `response`), when it has one that decodes.
import { parseJsonObject } from '../mqtt-messages.js';
import { isBase64 } from '../wire-patterns.js';
import { CaptureDirection, type LinkCapture } from './link-capture.js';

/** What follows `mqtt:` in an MQTT link's interface name: the broker's URL
 * without its user name and password. */
export function brokerName(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    // Not a URL a capture can name more precisely: credentials cannot be told apart.
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

/** The frame inside a command message (toBox: its `command`) or a response
 * message (fromBox: its `response`); undefined when the message is not a
 * JSON object or the member is absent or not base64. */
export function frameInMessage(direction: CaptureDirection, payload: Uint8Array): Buffer | undefined {
  let document: Record<string, unknown>;
  try {
    document = parseJsonObject(payload, 'message');
  } catch {
    return undefined;
  }
  const encoded = direction === CaptureDirection.toBox ? document.command : document.response;
  return typeof encoded === 'string' && isBase64(encoded) ? Buffer.from(encoded, 'base64') : undefined;
}

/** Records a command (toBox) or response (fromBox) message and the frame
 * inside it; returns that frame, for an opened record after it. */
export function recordMqttMessage(
  capture: LinkCapture,
  direction: CaptureDirection,
  topic: string,
  payload: Uint8Array,
  moduleId?: number,
): Buffer | undefined {
  const frame = frameInMessage(direction, payload);
  recordMqttMessageWithFrame(capture, direction, topic, payload, frame, moduleId);
  return frame;
}

/** recordMqttMessage for a message its sender just made: the frame it put
 * in it (undefined: none) is recorded as it is, not read back from the JSON. */
export function recordMqttMessageWithFrame(
  capture: LinkCapture,
  direction: CaptureDirection,
  topic: string,
  payload: Uint8Array,
  frame: Uint8Array | undefined,
  moduleId?: number,
): void {
  capture.message(direction, topic, payload, moduleId);
  if (frame !== undefined) capture.frame(direction, frame, moduleId);
}
