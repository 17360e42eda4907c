// The data of an opened record (docs/capture.md, Opened records): what a
// tool that holds the box's keys read inside the frame recorded before it.
// A command: its kind, whether it opened under the keys held, and the body's
// fields as the protocol lays them out, but for SET_ISSUER, whose public keys
// are given by their fingerprints. A response: whether its tag verifies.
// Never a key.
import { createHash } from 'node:crypto';
import {
  FrameKind,
  Status,
  openCommand,
  openSignedCommand,
  parseCommandHeader,
  verifyResponse,
  type OpenResult,
  type OpenedCommand,
} from '../../firmware-protocol/index.js';

/** Byte 1 of an opened record. */
export const OpenedOutcome = {
  /** The tag (or the signature) verified under a key the tool holds; the body follows. */
  opened: 0,
  /** No key the tool holds verifies it. */
  notVerified: 1,
  /** It verified, but its body has not the length its kind requires (MALFORMED). */
  malformedBody: 2,
} as const;
export type OpenedOutcome = (typeof OpenedOutcome)[keyof typeof OpenedOutcome];

/** The keys of one box, as a tool holds them (any may be absent). */
export interface BoxKeys {
  /** K_park of the box's parking, and the next one during a rotation. */
  readonly parkingKeys?: readonly Uint8Array[];
  readonly boxKey?: Uint8Array;
  /** The issuer public keys the box holds (issuer_key, issuer_key_previous). */
  readonly issuerKeys?: readonly (Uint8Array | null)[];
}

/** The opened record of a command frame, or null when its header does not
 * parse (nothing to open: the frame record shows it as it is). */
export function openedCommandData(frame: Uint8Array, keys: BoxKeys): Buffer | null {
  const parsed = parseCommandHeader(frame);
  if (!parsed.ok) return null;
  const { kind } = parsed.header;
  const result = openWith(frame, kind, keys);
  if (result.ok) return Buffer.concat([Buffer.from([kind, OpenedOutcome.opened]), bodyFields(result.command)]);
  const outcome = result.status === Status.MALFORMED ? OpenedOutcome.malformedBody : OpenedOutcome.notVerified;
  return Buffer.from([kind, outcome]);
}

function openWith(frame: Uint8Array, kind: FrameKind, keys: BoxKeys): OpenResult {
  if (kind === FrameKind.ACCESS_SIGNED) return openSignedCommand(frame, keys.issuerKeys ?? []);
  if (kind === FrameKind.ACCESS) return openCommand(frame, keys.parkingKeys ?? []);
  return openCommand(frame, keys.boxKey === undefined ? [] : [keys.boxKey]);
}

/** The opened record of a response: the kind it answers, and whether its
 * tag verifies under the box key for `command` (null: a status report). */
export function openedResponseData(response: Uint8Array, boxKey: Uint8Array, command: Uint8Array | null): Buffer {
  const verified = verifyResponse(response, boxKey, command);
  return Buffer.from([response[2] ?? 0, verified ? OpenedOutcome.opened : OpenedOutcome.notVerified]);
}

/** The first 4 bytes of SHA-256 of a public key (`issuerKeyFingerprint`'s
 * digits), 4 zero bytes for none. */
function fingerprint(publicKey: Uint8Array | null): Buffer {
  if (publicKey === null || publicKey.every((byte) => byte === 0)) return Buffer.alloc(4);
  return createHash('sha256').update(publicKey).digest().subarray(0, 4);
}

function u32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value >>> 0, 0);
  return out;
}

function bodyFields(command: OpenedCommand): Buffer {
  switch (command.kind) {
    case FrameKind.ACCESS:
    case FrameKind.ACCESS_SIGNED: {
      const body = command.body;
      return Buffer.concat([
        u32(body.notBefore),
        u32(body.notAfter),
        Buffer.from([body.maxEntries, body.maxExits, body.moduleIds.length]),
        ...body.moduleIds.map(u32),
      ]);
    }
    case FrameKind.BATTERY_QUERY:
      return Buffer.alloc(0);
    case FrameKind.TIME_SET:
      return u32(command.body.time);
    case FrameKind.REVOKE:
      return Buffer.concat([
        Buffer.from([command.body.entries.length]),
        ...command.body.entries.flatMap((entry) => [u32(entry.keyId), u32(entry.until)]),
      ]);
    case FrameKind.SET_ISSUER:
      return Buffer.concat([fingerprint(command.body.issuerKey), fingerprint(command.body.issuerKeyPrevious)]);
  }
}
