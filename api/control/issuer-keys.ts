// The transitions of a parking's issuer keys (migration 8's columns) that
// control commands drive. Each is conditional on the key it expects, so a
// transition that already happened (--force, another process) is a no-op.
import type { Db } from '../db/open.js';

export class IssuerKeyTransitions {
  private readonly setNext;
  private readonly activateNext;
  private readonly rotateToNext;
  private readonly dropPrevious;

  constructor(db: Db) {
    this.setNext = db.prepare<[string, string, number]>(
      'UPDATE secured_parkings SET issuer_next_private_key = ?, issuer_next_public_key = ? WHERE id = ? AND issuer_next_public_key IS NULL',
    );
    // sealed -> signed: the pair on the boxes now signs; K_park stays, so keys
    // sealed before still open until they expire.
    this.activateNext = db.prepare<[number, string]>(
      `UPDATE secured_parkings SET access_mode = 'signed', issuer_private_key = issuer_next_private_key, issuer_public_key = issuer_next_public_key,
         issuer_next_private_key = NULL, issuer_next_public_key = NULL
       WHERE id = ? AND issuer_next_public_key = ? AND access_mode = 'sealed'`,
    );
    // Rotation, step 2 (docs/protocol.md, Security notes): sign with the new
    // key; the boxes keep the old one as issuer_key_previous.
    this.rotateToNext = db.prepare<[number, string]>(
      `UPDATE secured_parkings SET issuer_previous_public_key = issuer_public_key, issuer_private_key = issuer_next_private_key,
         issuer_public_key = issuer_next_public_key, issuer_next_private_key = NULL, issuer_next_public_key = NULL
       WHERE id = ? AND issuer_next_public_key = ? AND access_mode = 'signed'`,
    );
    this.dropPrevious = db.prepare<[number, string]>(
      'UPDATE secured_parkings SET issuer_previous_public_key = NULL WHERE id = ? AND issuer_public_key = ?',
    );
  }

  /** Stores a pair being installed; false when one already is. */
  installNext(parkingId: number, privateKeyHex: string, publicKeyHex: string): boolean {
    return this.setNext.run(privateKeyHex, publicKeyHex, parkingId).changes === 1;
  }

  /** A sealed parking starts signing with its next pair. */
  switchToSigned(parkingId: number, nextPublicKeyHex: string): boolean {
    return this.activateNext.run(parkingId, nextPublicKeyHex).changes === 1;
  }

  /** A signed parking signs with its next pair; the current one becomes previous. */
  rotate(parkingId: number, nextPublicKeyHex: string): boolean {
    return this.rotateToNext.run(parkingId, nextPublicKeyHex).changes === 1;
  }

  /** The boxes dropped the previous key: forget it (while `currentPublicKeyHex` is current). */
  forgetPrevious(parkingId: number, currentPublicKeyHex: string): boolean {
    return this.dropPrevious.run(parkingId, currentPublicKeyHex).changes === 1;
  }
}
