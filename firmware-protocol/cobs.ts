// Consistent Overhead Byte Stuffing (docs/protocol.md, Serial link framing): the
// encoded bytes hold no 0x00, so 0x00 can delimit frames. The delimiter is
// not part of what these functions encode or decode.

/** Worst-case encoded length of `length` bytes. */
export function cobsMaxEncodedLength(length: number): number {
  return length + Math.ceil(length / 254) + 1;
}

/** Encodes `data` into `out` at `outOffset`; returns the offset after the last byte written. */
export function cobsEncodeInto(data: Uint8Array, out: Uint8Array, outOffset: number): number {
  let codeIndex = outOffset;
  let write = outOffset + 1;
  let code = 1;
  for (let i = 0; i < data.length; i++) {
    const byte = data[i] ?? 0;
    if (byte === 0) {
      out[codeIndex] = code;
      codeIndex = write++;
      code = 1;
      continue;
    }
    out[write++] = byte;
    code++;
    if (code === 0xff) {
      out[codeIndex] = code;
      codeIndex = write++;
      code = 1;
    }
  }
  out[codeIndex] = code;
  return write;
}

export function cobsEncode(data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(cobsMaxEncodedLength(data.length));
  return out.subarray(0, cobsEncodeInto(data, out, 0));
}

/** Decodes COBS bytes (no delimiter). Returns null when the encoding is bad:
 * a 0x00 inside, or a code that runs past the end. */
export function cobsDecode(encoded: Uint8Array, start = 0, end = encoded.length): Buffer | null {
  const out = Buffer.allocUnsafe(Math.max(0, end - start));
  let write = 0;
  let read = start;
  while (read < end) {
    const code = encoded[read] ?? 0;
    if (code === 0) return null;
    read++;
    const blockEnd = read + code - 1;
    if (blockEnd > end) return null;
    for (; read < blockEnd; read++) {
      const byte = encoded[read] ?? 0;
      if (byte === 0) return null;
      out[write++] = byte;
    }
    if (code !== 0xff && read < end) out[write++] = 0;
  }
  return out.subarray(0, write);
}
