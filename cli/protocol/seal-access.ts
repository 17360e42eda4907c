// `parkbench protocol seal-access`: validates every flag, then seals an
// ACCESS command (docs/protocol.md, Command frame) and returns its base64.
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { UsageError } from '../errors.js';
import { U32_MAX, U8_MAX, parseHexFlag, parseIntegerFlag, parseKeyFlag, parseModulesFlag, parseTimeFlag } from './input.js';

export interface SealAccessFlags {
  parkingKey: string;
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
  const key = parseKeyFlag('--parking-key', flags.parkingKey);
  const keyId = parseIntegerFlag('--key-id', flags.keyId, U32_MAX);
  const parking = parseIntegerFlag('--parking', flags.parking, U32_MAX);
  const moduleIds = parseModulesFlag('--modules', flags.modules);
  const notBefore = parseTimeFlag('--from', flags.from);
  const notAfter = parseTimeFlag('--to', flags.to);
  if (notBefore > notAfter) throw new UsageError('--from must not be later than --to');
  const maxEntries = parseIntegerFlag('--entries', flags.entries, U8_MAX);
  const maxExits = parseIntegerFlag('--exits', flags.exits, U8_MAX);
  const nonce = flags.nonce === undefined ? undefined : parseHexFlag('--nonce', flags.nonce, 12);
  const frame = sealCommand({
    key,
    kind: FrameKind.ACCESS,
    keyId,
    scope: parking,
    ...(nonce === undefined ? {} : { nonce }),
    body: { notBefore, notAfter, maxEntries, maxExits, moduleIds },
  });
  return frame.toString('base64');
}
