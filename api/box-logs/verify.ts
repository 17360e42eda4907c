// Is a box log verified? Its `response` parses as a response frame of
// PROTOCOL.md and its tag verifies under the key of the box named by
// `equipment_id`, with the log's `command` (its bytes 10..21, the nonce) in
// the AAD. A verified response's fields can be trusted; an unverified log is
// stored and changes nothing.
import { parseResponse, verifyResponse, type ParsedResponse } from '../../firmware-protocol/index.js';

/** Box keys as bytes, cached by their hex (parsed once per box, not per log). */
const keyCache = new Map<string, Buffer>();

function keyBytes(hex: string): Buffer {
  let key = keyCache.get(hex);
  if (key === undefined) {
    key = Buffer.from(hex, 'hex');
    if (keyCache.size > 10_000) keyCache.clear();
    keyCache.set(hex, key);
  }
  return key;
}

/** The trusted fields of a verified response (base64, as logged) to the
 * command bytes, or null. Never throws. */
export function verifiedResponse(responseBase64: string | null, command: Buffer | null, box: { module_id: number; box_key: string }): ParsedResponse | null {
  if (responseBase64 === null) return null;
  const response = Buffer.from(responseBase64, 'base64');
  if (!verifyResponse(response, keyBytes(box.box_key), command)) return null;
  let fields: ParsedResponse;
  try {
    fields = parseResponse(response);
  } catch {
    return null; // a valid tag over bytes that are no response (unknown status, ...)
  }
  // Every response of this box carries its own module id; anything else is not its answer.
  return fields.moduleId === box.module_id ? fields : null;
}
