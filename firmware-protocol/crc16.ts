// CRC-16/CCITT-FALSE (docs/protocol.md, Serial link framing): poly 0x1021, init
// 0xFFFF, no reflection, no final xor. Check value for "123456789": 0x29B1.

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >>> 8) ^ (bytes[i] ?? 0)) & 0xff] ?? 0);
  }
  return crc;
}
