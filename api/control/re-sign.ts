// A rotation started with --re-sign: once the service signs with the new
// issuer key (every box holds it), the live smart keys the previous key
// signed are signed again with the new one, a batch at each poll of the
// control queue (scheduleDueDrops), outside any ingestion. Then no live key
// needs the previous key, the drop SET_ISSUER(new, none) goes out at once,
// and every signature the previous key made, a revoked key's among them,
// opens nothing any more: the way out when a box could not take a REVOKE
// (REVOCATION_FULL). A re-signed key keeps its id, window, tries and
// modules (the boxes count tries per key id); only its signature and nonce
// change, so a phone must fetch it again (its smart keys or its session).
import { sql } from 'kysely';
import { CommandOffset, SIGNATURE_LENGTH, signRawCommand } from '../../firmware-protocol/index.js';
import type { Store } from '../db/store.js';

/** Keys signed again per call: a signature costs about 0.1 ms; a batch is one short transaction. */
export const RE_SIGN_BATCH = 500;

/** The frame `accessCommand` (an ACCESS_SIGNED) signed by `privateKey` with a fresh nonce. */
export function reSigned(accessCommand: Buffer, privateKey: Buffer): Buffer {
  return signRawCommand({
    privateKey,
    keyId: accessCommand.readUInt32BE(CommandOffset.keyId),
    scope: accessCommand.readUInt32BE(CommandOffset.scope),
    body: accessCommand.subarray(CommandOffset.body, accessCommand.length - SIGNATURE_LENGTH),
  });
}

/**
 * Signs again, with the parking's current key, up to RE_SIGN_BATCH of its
 * smart keys that the previous key signed and that are not revoked and not
 * expired (end + `skewMs` still ahead). Each update is conditional on the
 * key still signed by the previous one. Resolves with how many it signed.
 */
export async function reSignLiveKeys(
  store: Store,
  parking: { id: number; issuer_private_key: string; issuer_public_key: string; issuer_previous_public_key: string },
  nowMs: number,
  skewMs: number,
): Promise<number> {
  const previous = parking.issuer_previous_public_key.toLowerCase();
  const keys = await store.kysely
    .selectFrom('smart_keys')
    .select(['id', 'access_command'])
    .where('parking_id', '=', parking.id)
    .where(sql<string>`lower(signed_by)`, '=', previous)
    .where('revoked_at', 'is', null)
    .where('end_time', '>=', nowMs - skewMs)
    .orderBy('id')
    .limit(RE_SIGN_BATCH)
    .execute();
  if (keys.length === 0) return 0;
  const privateKey = Buffer.from(parking.issuer_private_key, 'hex');
  const signed = keys.map((key) => ({ id: key.id, command: reSigned(Buffer.from(key.access_command), privateKey) }));
  return store.kysely.transaction().execute(async (trx) => {
    let count = 0;
    for (const key of signed) {
      const result = await trx
        .updateTable('smart_keys')
        .set({ access_command: key.command, signed_by: parking.issuer_public_key })
        .where('id', '=', key.id)
        .where(sql<string>`lower(signed_by)`, '=', previous)
        .executeTakeFirst();
      count += Number(result.numUpdatedRows);
    }
    return count;
  });
}
