// Refuses an MQTT packet whose fixed header declares more bytes than allowed,
// before its body is buffered. aedes 1.x hands mqtt-packet no size
// limit: a CONNECT declaring 256 MB is kept in memory as it streams in, until
// the 30 s connect timeout. A PacketSizeScanner reads each fixed header as
// the bytes arrive (MQTT 3.1.1, 2.2: one type byte, then the remaining length
// as a 1 to 4 byte varint) and skips the bodies without copying them, in
// the socket's reads (guardReads).
import type { Socket } from 'node:net';

export interface PacketSizeLimits {
  /** Largest packet before `loggedIn()` (the CONNECT and anything sent
   * before its CONNACK), whole packet bytes. */
  readonly connectBytes: number;
  /** Largest packet after it, whole packet bytes. */
  readonly packetBytes: number;
}

export interface PacketRefusal {
  /** Whole packet bytes declared (null: the length itself was malformed). */
  readonly declaredBytes: number | null;
  readonly limitBytes: number;
  /** Refused before the client had logged in. */
  readonly beforeLogin: boolean;
  /** Where the refused packet starts in the chunk scanned: the bytes before
   * it are complete packets within the limits. */
  readonly offset: number;
}

export class PacketTooLargeError extends Error {
  override readonly name = 'PacketTooLargeError';
  constructor(readonly refusal: PacketRefusal) {
    super(
      refusal.declaredBytes === null
        ? 'malformed remaining length (more than 4 bytes)'
        : `packet of ${refusal.declaredBytes} bytes over the limit of ${refusal.limitBytes}${refusal.beforeLogin ? ' before login' : ''}`,
    );
  }
}

/** The largest remaining length has 4 bytes [MQTT-2.2.3]. */
const MAX_LENGTH_BYTES = 4;

/** The fixed headers of a byte stream, chunk by chunk: pure, no I/O. */
export class PacketSizeScanner {
  #state: 'type' | 'length' | 'body' = 'type';
  #loggedIn = false;
  #length = 0;
  #multiplier = 1;
  #lengthBytes = 0;
  /** Body bytes of the current packet still to come. */
  #remaining = 0;

  constructor(private readonly limits: PacketSizeLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 2) throw new RangeError(`${name} must be an integer of at least 2`);
    }
  }

  /** The client has logged in: packets up to `packetBytes` from now on. */
  loggedIn(): void {
    this.#loggedIn = true;
  }

  /** Reads the next bytes; a refusal when a packet is over its limit (the
   * stream must then stop: nothing after it is scanned). */
  scan(chunk: Uint8Array): PacketRefusal | null {
    let offset = 0;
    let packetStart = 0;
    while (offset < chunk.length) {
      if (this.#state === 'body') {
        const skipped = Math.min(this.#remaining, chunk.length - offset);
        offset += skipped;
        this.#remaining -= skipped;
        if (this.#remaining === 0) this.#endPacket();
        continue;
      }
      const byte = chunk[offset++] ?? 0;
      if (this.#state === 'type') {
        packetStart = offset - 1;
        this.#state = 'length';
        continue;
      }
      this.#length += (byte & 0x7f) * this.#multiplier;
      this.#multiplier *= 128;
      this.#lengthBytes++;
      if ((byte & 0x80) !== 0) {
        if (this.#lengthBytes < MAX_LENGTH_BYTES) continue;
        return this.#refusal(null, packetStart);
      }
      const declared = 1 + this.#lengthBytes + this.#length;
      if (declared > this.#limit()) return this.#refusal(declared, packetStart);
      this.#remaining = this.#length;
      if (this.#remaining === 0) this.#endPacket();
      else this.#state = 'body';
    }
    return null;
  }

  #limit(): number {
    return this.#loggedIn ? this.limits.packetBytes : this.limits.connectBytes;
  }

  #endPacket(): void {
    this.#state = 'type';
    this.#length = 0;
    this.#multiplier = 1;
    this.#lengthBytes = 0;
  }

  #refusal(declaredBytes: number | null, offset: number): PacketRefusal {
    return { declaredBytes, limitBytes: this.#limit(), beforeLogin: !this.#loggedIn, offset };
  }
}

/**
 * Scans every chunk aedes reads from the socket, in the socket's own `read`:
 * aedes pulls its bytes only with `conn.read(null)` on 'readable'
 * (aedes/lib/client.js, nextBatch), so the fixed headers are seen before the
 * parser gets them, with no second stream in between. A Duplex wrapped around
 * the socket did the same at about 8% of perf:ingest (every byte and every
 * write through one more stream). A refusal destroys the socket at once (the
 * client sees the connection close: MQTT 3.1.1 has no code to refuse a packet
 * with) and is reported to `onRefused`; the complete packets before it still
 * reach aedes. test/api/mqtt/oversized-packets.test.ts proves the guard holds on
 * the real broker, so an aedes that read another way would fail it.
 */
export function guardReads(
  socket: Socket,
  limits: PacketSizeLimits,
  onRefused: (refusal: PacketRefusal) => void,
): PacketSizeScanner {
  const scanner = new PacketSizeScanner(limits);
  const read = socket.read.bind(socket);
  socket.read = (size?: number): Buffer | null => {
    const chunk = read(size) as Buffer | null;
    if (chunk === null || socket.destroyed) return chunk;
    const refusal = scanner.scan(chunk);
    if (refusal === null) return chunk;
    onRefused(refusal);
    socket.destroy();
    return refusal.offset > 0 ? chunk.subarray(0, refusal.offset) : null;
  };
  return scanner;
}
