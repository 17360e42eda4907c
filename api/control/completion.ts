// What an operation does once every one of its deliveries is done (called
// in the transaction that marks the last one done, or at once for an
// operation on a parking without boxes).
import type { Db } from '../db/open.js';
import { IssuerKeyTransitions } from './issuer-keys.js';
import { ControlCommandsSqlite, type ControlBody, type ControlPurpose } from './repository.js';

// SQLite only until the ingestion core moves to the store (issue 18)
export function completeOperation(db: Db, operation: string): void {
  const commands = new ControlCommandsSqlite(db);
  if (commands.unfinished(operation) > 0) return;
  const [first] = commands.listOfOperation(operation);
  if (first === undefined) return;
  const body = JSON.parse(first.body) as ControlBody;
  // A REVOKE has nothing more to do: the key was refused in the service at once.
  if ('issuer_key' in body) applyIssuerStep(db, first.purpose, first.parking_id, body.issuer_key);
}

/** The parking's side of a SET_ISSUER step every box has taken (or that no
 * box needs: a parking without boxes). */
export function applyIssuerStep(db: Db, purpose: ControlPurpose, parkingId: number, issuerKeyHex: string): void {
  const keys = new IssuerKeyTransitions(db);
  switch (purpose) {
    case 'set_access':
      keys.switchToSigned(parkingId, issuerKeyHex);
      return;
    case 'rotate_install':
      keys.rotate(parkingId, issuerKeyHex);
      return;
    case 'rotate_drop':
      keys.forgetPrevious(parkingId, issuerKeyHex);
      return;
    case 'revoke':
      return;
  }
}
