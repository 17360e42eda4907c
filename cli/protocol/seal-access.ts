// `parkbench protocol seal-access`: validates every flag, then makes an
// access command (docs/protocol.md, Command frame) and returns its base64: a
// sealed ACCESS under --parking-key (version 1), or an ACCESS_SIGNED signed
// with --issuer-key (version 2). Exactly one of the two keys is given.
import {
  type AccessBody,
  FrameKind,
  U32_MAX,
  U8_MAX,
  sealCommand,
  signAccessCommand,
} from '../../firmware-protocol/index.js';
import { UsageError } from '../errors.js';
import {
  parseHexFlag,
  parseIntegerFlag,
  parseIssuerKeyFile,
  parseKeyFlag,
  parseModulesFlag,
  parseTimeFlag,
} from './input.js';

export interface SealAccessFlags {
  parkingKey?: string | undefined;
  /** A file: PEM private key or 64 hex digits (input.ts, parseIssuerKeyFile). */
  issuerKey?: string | undefined;
  keyId: string;
  parking: string;
  modules: string;
  from: string;
  to: string;
  entries: string;
  exits: string;
  nonce?: string | undefined;
}

export function sealAccessBase64(flags: SealAccessFlags): string {
  if ((flags.parkingKey === undefined) === (flags.issuerKey === undefined)) {
    throw new UsageError(
      'exactly one of --parking-key (a sealed ACCESS) and --issuer-key (an ACCESS_SIGNED) is required',
    );
  }
  const parkingKey = flags.parkingKey === undefined ? undefined : parseKeyFlag('--parking-key', flags.parkingKey);
  const keyId = parseIntegerFlag('--key-id', flags.keyId, U32_MAX);
  const parking = parseIntegerFlag('--parking', flags.parking, U32_MAX);
  const moduleIds = parseModulesFlag('--modules', flags.modules);
  const notBefore = parseTimeFlag('--from', flags.from);
  const notAfter = parseTimeFlag('--to', flags.to);
  if (notBefore > notAfter) throw new UsageError('--from must not be later than --to');
  const maxEntries = parseIntegerFlag('--entries', flags.entries, U8_MAX);
  const maxExits = parseIntegerFlag('--exits', flags.exits, U8_MAX);
  const nonce = flags.nonce === undefined ? undefined : parseHexFlag('--nonce', flags.nonce, 12);
  const body: AccessBody = { notBefore, notAfter, maxEntries, maxExits, moduleIds };
  // Read last: every cheap flag error is reported before the file is touched.
  const frame =
    parkingKey === undefined
      ? signAccessCommand({
          privateKey: parseIssuerKeyFile('--issuer-key', flags.issuerKey ?? ''),
          keyId,
          scope: parking,
          ...(nonce === undefined ? {} : { nonce }),
          body,
        })
      : sealCommand({
          key: parkingKey,
          kind: FrameKind.ACCESS,
          keyId,
          scope: parking,
          ...(nonce === undefined ? {} : { nonce }),
          body,
        });
  return frame.toString('base64');
}
