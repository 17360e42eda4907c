// Link-level garbage: what a noisy cable or a confused central puts on a
// link. A box drops it without answering (docs/protocol.md, Serial link framing:
// "A frame with a bad CRC or bad COBS is dropped and counted, never passed
// on"; sizes: "Anything longer on a link is dropped as bad framing"; BLE
// link: a chunk out of order drops the partial frame).
import { cobsEncode, crc16, encodeLinkFrame, LinkType, MAX_LINK_FRAME_LENGTH } from '../../firmware-protocol/index.js';

const DELIMITER = Buffer.of(0x00);

/** Serial garbage, each piece ending with the 0x00 delimiter so it cannot
 * swallow the frame that follows. */
export function serialGarbage(): Buffer[] {
  const noise = Buffer.concat([Buffer.from('\x13\x37 line noise \xff\xfe', 'latin1'), DELIMITER]);
  const oversize = Buffer.concat([Buffer.alloc(MAX_LINK_FRAME_LENGTH + 20, 0x41), DELIMITER]);
  return [
    DELIMITER,
    noise,
    badCrcFrame(),
    oversize,
    rawLinkFrame(0x55, Buffer.from('no such type')),
    misdirectedFrame(),
    Buffer.of(0x05, 0x01, 0x00),
  ];
}

/** A command link frame whose CRC does not match. */
function badCrcFrame(): Buffer {
  const raw = Buffer.concat([Buffer.of(LinkType.COMMAND), Buffer.from('not a command'), Buffer.alloc(2)]);
  raw.writeUInt16BE(crc16(raw, 0, raw.length - 2) ^ 0x0001, raw.length - 2);
  return Buffer.concat([cobsEncode(raw), DELIMITER]);
}

/** A link frame with a valid CRC and COBS under any type byte. */
function rawLinkFrame(type: number, payload: Buffer): Buffer {
  const raw = Buffer.concat([Buffer.of(type), payload, Buffer.alloc(2)]);
  raw.writeUInt16BE(crc16(raw, 0, raw.length - 2), raw.length - 2);
  return Buffer.concat([cobsEncode(raw), DELIMITER]);
}

/** A well-formed response frame (type 0x81) sent the wrong way: a box does
 * not take it. Kept for completeness of the garbage, with an empty payload. */
export function misdirectedFrame(): Buffer {
  return encodeLinkFrame(LinkType.RESPONSE, Buffer.alloc(0));
}

/** BLE garbage: chunks that start no frame, and a frame cut short by the
 * next one (counter 0 always starts a new frame). */
export function bleGarbage(): Buffer[] {
  return [Buffer.of(0x05, 0xde, 0xad), Buffer.of(0x83, 0xbe, 0xef), Buffer.of(0x00, 0x01, 0x01, 0x00, 0x00)];
}

/** MQTT garbage: payloads on the command topic that are no command message
 * (docs/architecture.md, MQTT topics: counted and dropped without a response). */
export function mqttGarbage(): string[] {
  return ['not json', '{"command": 42}', '{"context": {}}', '[]'];
}
