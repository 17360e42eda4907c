// One-line renderings for box logs and the CLI. They never throw and never
// show a key. Without the key, a sealed command's body cannot be shown; an
// ACCESS_SIGNED body is in the clear and always can.
import {
  Direction,
  FrameKind,
  REMAINING_NOT_APPLICABLE,
  Status,
  barrierName,
  isAccessKind,
  kindName,
  statusName,
} from './constants.js';
import { type CommandHeader, type OpenResult, type OpenedCommand, openCommand, parseCommandHeader } from './command.js';
import { decodeAccessBody } from './command-body.js';
import { issuerKeyFingerprint } from './issuer-keys.js';
import { parseResponse } from './response.js';
import { openSignedCommand, signedBody } from './signed-command.js';

/** Unix seconds as ISO 8601 UTC without milliseconds: 2026-01-01T00:00:00Z. */
export function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

function hexByte(value: number): string {
  return `0x${value.toString(16).padStart(2, '0')}`;
}

function renderHeader(header: CommandHeader): string {
  const name = kindName(header.kind) ?? hexByte(header.kind);
  return isAccessKind(header.kind)
    ? `${name} key=${header.keyId} parking=${header.scope}`
    : `${name} seq=${header.keyId} module=${header.scope}`;
}

function renderOpened(command: OpenedCommand): string {
  switch (command.kind) {
    case FrameKind.ACCESS:
    case FrameKind.ACCESS_SIGNED: {
      const b = command.body;
      return (
        `${kindName(command.kind) ?? ''} key=${command.keyId} parking=${command.scope} modules=${b.moduleIds.join(',')} ` +
        `valid=${isoSeconds(b.notBefore)}..${isoSeconds(b.notAfter)} entries=${b.maxEntries} exits=${b.maxExits}`
      );
    }
    case FrameKind.BATTERY_QUERY:
      return `BATTERY_QUERY seq=${command.keyId} module=${command.scope}`;
    case FrameKind.TIME_SET:
      return `TIME_SET seq=${command.keyId} module=${command.scope} time=${isoSeconds(command.body.time)}`;
    case FrameKind.REVOKE: {
      const entries = command.body.entries.map((entry) => `${entry.keyId} until ${isoSeconds(entry.until)}`);
      return `REVOKE seq=${command.keyId} module=${command.scope} keys=${entries.join(', ')}`;
    }
    case FrameKind.SET_ISSUER: {
      const previous = command.body.issuerKeyPrevious;
      return `SET_ISSUER seq=${command.keyId} module=${command.scope} issuer=${issuerKeyFingerprint(command.body.issuerKey)} previous=${previous === null ? 'none' : issuerKeyFingerprint(previous)}`;
    }
  }
}

type KeyList = Uint8Array | readonly Uint8Array[];
const listOf = (keys: KeyList | readonly (Uint8Array | null)[] | undefined): readonly (Uint8Array | null)[] =>
  keys === undefined ? [] : keys instanceof Uint8Array ? [keys] : keys;

/** An ACCESS_SIGNED: its body is in the clear. Without issuer keys it is shown
 * as it reads (the signature unchecked); with them, only when one verifies. */
function renderSigned(
  bytes: Uint8Array,
  header: CommandHeader,
  issuerKeys: readonly (Uint8Array | null)[] | undefined,
): string {
  let opened: OpenResult;
  if (issuerKeys === undefined) {
    const body = decodeAccessBody(signedBody(bytes, header));
    opened =
      body === null
        ? { ok: false, status: Status.MALFORMED, header }
        : {
            ok: true,
            keyIndex: -1,
            command: {
              kind: FrameKind.ACCESS_SIGNED,
              keyId: header.keyId,
              scope: header.scope,
              body,
              nonce: header.nonce,
            },
          };
  } else {
    opened = openSignedCommand(bytes, issuerKeys);
  }
  return opened.ok
    ? renderOpened(opened.command)
    : `${renderHeader(header)} ${statusName(opened.status) ?? 'MALFORMED'}`;
}

/** `ACCESS key=42 parking=7 modules=101,102 valid=...Z..Z entries=3 exits=3`
 * with a key that opens it; `ACCESS key=42 parking=7 body=sealed(23 bytes)`
 * without; `MALFORMED <5 bytes>` for bytes that are no command. An
 * ACCESS_SIGNED renders the same way from its clear body; given
 * `issuerKeys` (public, X || Y), it renders `... AUTH_FAILED` unless one
 * verifies its signature. */
export function renderCommand(
  bytes: Uint8Array,
  keys?: KeyList,
  issuerKeys?: KeyList | readonly (Uint8Array | null)[],
): string {
  try {
    const parsed = parseCommandHeader(bytes);
    if (!parsed.ok) {
      const name = statusName(parsed.status) ?? 'MALFORMED';
      return parsed.status === Status.UNSUPPORTED_VERSION
        ? `${name} version=${hexByte(bytes[0] ?? 0)} <${bytes.length} bytes>`
        : `${name} <${bytes.length} bytes>`;
    }
    const head = renderHeader(parsed.header);
    if (parsed.header.kind === FrameKind.ACCESS_SIGNED)
      return renderSigned(bytes, parsed.header, issuerKeys === undefined ? undefined : listOf(issuerKeys));
    const keyList = listOf(keys).filter((key): key is Uint8Array => key !== null);
    if (keyList.length === 0) return `${head} body=sealed(${parsed.header.bodyLength} bytes)`;
    const opened = openCommand(bytes, keyList);
    return opened.ok ? renderOpened(opened.command) : `${head} ${statusName(opened.status) ?? 'MALFORMED'}`;
  } catch {
    return `MALFORMED <${bytes.length} bytes>`;
  }
}

function directionWord(direction: number): string {
  if (direction === Direction.CONTROL) return 'control';
  return direction === Direction.ENTRANCE ? 'entrance' : 'exit';
}

/** `OK ACCESS module=101 key=42 seq=5 time=...Z battery=3700mV
 * barrier=OPENING dir=entrance remaining=2`. The tag is not checked here.
 * Kind 0 (unparsed command, status report) renders as `-`. */
export function renderResponse(bytes: Uint8Array): string {
  try {
    const r = parseResponse(bytes);
    const kind = r.kind === 0 ? '-' : (kindName(r.kind) ?? hexByte(r.kind));
    const remaining = r.remaining === REMAINING_NOT_APPLICABLE ? '-' : String(r.remaining);
    return (
      `${statusName(r.status) ?? hexByte(r.status)} ${kind} module=${r.moduleId} key=${r.keyId} seq=${r.boxSeq} ` +
      `time=${isoSeconds(r.boxTime)} battery=${r.batteryMv}mV barrier=${barrierName(r.barrier) ?? r.barrier} ` +
      `dir=${directionWord(r.direction)} remaining=${remaining}`
    );
  } catch {
    return `MALFORMED <${bytes.length} bytes>`;
  }
}
