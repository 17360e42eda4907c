// Refuses an MQTT packet whose fixed header declares more bytes than allowed,
// before its body is buffered (issue 12). aedes 1.x hands mqtt-packet no size
// limit: a CONNECT declaring 256 MB is kept in memory as it streams in, until
// the 30 s connect timeout. This Transform sits between the socket and aedes,
// reads each fixed header as the bytes arrive (MQTT 3.1.1, 2.2: one type byte,
// then the remaining length as a 1 to 4 byte varint) and skips the bodies
// without copying them; bytes pass through unchanged.
import { Duplex, pipeline, Transform, type TransformCallback } from 'node:stream';
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

export class PacketSizeGuard extends Transform {
  #state: 'type' | 'length' | 'body' = 'type';
  #loggedIn = false;
  #length = 0;
  #multiplier = 1;
  #lengthBytes = 0;
  /** Body bytes of the current packet still to pass. */
  #remaining = 0;

  constructor(private readonly limits: PacketSizeLimits) {
    super();
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 2) throw new RangeError(`${name} must be an integer of at least 2`);
    }
  }

  /** The client has logged in: packets up to `packetBytes` from now on. */
  loggedIn(): void {
    this.#loggedIn = true;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let offset = 0;
    // Where the packet being read starts in this chunk: a refused one is
    // not passed on, the complete packets before it are.
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
        return this.#refuse(chunk, packetStart, null, callback);
      }
      const declared = 1 + this.#lengthBytes + this.#length;
      if (declared > this.#limit()) return this.#refuse(chunk, packetStart, declared, callback);
      this.#remaining = this.#length;
      if (this.#remaining === 0) this.#endPacket();
      else this.#state = 'body';
    }
    callback(null, chunk);
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

  #refuse(chunk: Buffer, packetStart: number, declaredBytes: number | null, callback: TransformCallback): void {
    if (packetStart > 0) this.push(chunk.subarray(0, packetStart));
    callback(new PacketTooLargeError({ declaredBytes, limitBytes: this.#limit(), beforeLogin: !this.#loggedIn }));
  }
}

/**
 * `connection` is what aedes is given: reads come through `guard`, writes go
 * straight to the socket. A refusal destroys the socket at once (the client
 * sees the connection close: MQTT 3.1.1 has no code to refuse a packet with)
 * and is reported to `onRefused`.
 */
export function guardPacketSizes(socket: Socket, limits: PacketSizeLimits, onRefused: (refusal: PacketRefusal) => void): { connection: Duplex; guard: PacketSizeGuard } {
  const guard = new PacketSizeGuard(limits);
  pipeline(socket, guard, (error) => {
    if (error instanceof PacketTooLargeError) onRefused(error.refusal);
  });
  return { connection: Duplex.from({ readable: guard, writable: socket }), guard };
}
