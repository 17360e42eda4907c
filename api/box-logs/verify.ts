// Is a box log verified? Its `response` parses as a response frame of
// docs/protocol.md (Response frame) and its tag verifies under the key of the box named by
// `equipment_id`, with the log's `command` (its bytes 10..21, the nonce) in
// the AAD. A verified response's fields can be trusted; an unverified log is
// stored and changes nothing.
import { parseResponse, verifyResponses, type ParsedResponse } from '../../firmware-protocol/index.js';

export interface BoxOfLog {
  module_id: number;
  /** 32 hex digits. */
  box_key: string;
}

/** One log to verify: its response and command as logged (base64 / bytes), and its box. */
export interface LogToVerify {
  response: string | null;
  command: Buffer | null;
  box: BoxOfLog;
}

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

/** The trusted fields of verified response bytes, or null. */
function trustedFields(response: Buffer, box: BoxOfLog): ParsedResponse | null {
  let fields: ParsedResponse;
  try {
    fields = parseResponse(response);
  } catch {
    return null; // a valid tag over bytes that are no response (unknown status, ...)
  }
  // Every response of this box carries its own module id; anything else is not its answer.
  return fields.moduleId === box.module_id ? fields : null;
}

/** For each log, in order, the trusted fields of its verified response, or
 * null. The logs of one box are verified together (one key: verifyResponses).
 * Never throws. */
export function verifiedResponses(logs: readonly LogToVerify[]): (ParsedResponse | null)[] {
  const results: (ParsedResponse | null)[] = logs.map(() => null);
  const byBox = new Map<
    number,
    { box: BoxOfLog; items: { index: number; response: Buffer; command: Buffer | null }[] }
  >();
  logs.forEach(({ response, command, box }, index) => {
    if (response === null) return;
    let group = byBox.get(box.module_id);
    if (group === undefined) {
      group = { box, items: [] };
      byBox.set(box.module_id, group);
    }
    group.items.push({ index, response: Buffer.from(response, 'base64'), command });
  });
  for (const { box, items } of byBox.values()) {
    const verified = verifyResponses(items, keyBytes(box.box_key));
    items.forEach(({ index, response }, i) => {
      if (verified[i] === true) results[index] = trustedFields(response, box);
    });
  }
  return results;
}
