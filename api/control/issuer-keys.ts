// The transitions of a parking's issuer keys (migration 8's columns) that
// control commands drive. Each is conditional on the key it expects, so a
// transition that already happened (--force, another process) is a no-op.
// They run on an Executor: the operation's transaction, or the ingestion's
// when a box's verified answer settles the last delivery (settle.ts).
import { sql } from 'kysely';
import { changed, type Executor } from '../db/store.js';

export class IssuerKeyTransitions {
  constructor(private readonly on: Executor) {}

  /** Stores a pair being installed; false when one already is. */
  async installNext(parkingId: number, privateKeyHex: string, publicKeyHex: string): Promise<boolean> {
    const result = await this.on
      .updateTable('secured_parkings')
      .set({ issuer_next_private_key: privateKeyHex, issuer_next_public_key: publicKeyHex })
      .where('id', '=', parkingId)
      .where('issuer_next_public_key', 'is', null)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** A sealed parking starts signing with its next pair (K_park stays: keys
   * sealed before still open until they expire). */
  async switchToSigned(parkingId: number, nextPublicKeyHex: string): Promise<boolean> {
    const result = await this.on
      .updateTable('secured_parkings')
      .set({
        access_mode: 'signed',
        issuer_private_key: sql.ref('issuer_next_private_key'),
        issuer_public_key: sql.ref('issuer_next_public_key'),
        issuer_next_private_key: null,
        issuer_next_public_key: null,
      })
      .where('id', '=', parkingId)
      .where('issuer_next_public_key', '=', nextPublicKeyHex)
      .where('access_mode', '=', 'sealed')
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** Rotation, step 2 (docs/protocol.md, Security notes): a signed parking
   * signs with its next pair; the current one becomes previous. */
  async rotate(parkingId: number, nextPublicKeyHex: string): Promise<boolean> {
    const result = await this.on
      .updateTable('secured_parkings')
      .set({
        issuer_previous_public_key: sql.ref('issuer_public_key'),
        issuer_private_key: sql.ref('issuer_next_private_key'),
        issuer_public_key: sql.ref('issuer_next_public_key'),
        issuer_next_private_key: null,
        issuer_next_public_key: null,
      })
      .where('id', '=', parkingId)
      .where('issuer_next_public_key', '=', nextPublicKeyHex)
      .where('access_mode', '=', 'signed')
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** The boxes dropped the previous key: forget it (while `currentPublicKeyHex` is current). */
  async forgetPrevious(parkingId: number, currentPublicKeyHex: string): Promise<boolean> {
    const result = await this.on
      .updateTable('secured_parkings')
      .set({ issuer_previous_public_key: null })
      .where('id', '=', parkingId)
      .where('issuer_public_key', '=', currentPublicKeyHex)
      .executeTakeFirst();
    return changed(result) === 1;
  }
}
