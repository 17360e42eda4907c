// What an operation does once every one of its deliveries is done (called
// in the transaction that marks the last one done, or at once for an
// operation on a parking without boxes).
import type { Db } from '../db/open.js';
import type { Executor } from '../db/store.js';
import { IssuerKeyTransitions, IssuerKeyTransitionsSqlite } from './issuer-keys.js';
import { ControlCommandsSqlite, type ControlBody, type ControlPurpose } from './repository.js';

// SQLite only until the ingestion core moves to the store (issue 18)
export function completeOperation(db: Db, operation: string): void {
  const commands = new ControlCommandsSqlite(db);
  if (commands.unfinished(operation) > 0) return;
  const [first] = commands.listOfOperation(operation);
  if (first === undefined) return;
  const body = JSON.parse(first.body) as ControlBody;
  // A REVOKE has nothing more to do: the key was refused in the service at once.
  if ('issuer_key' in body)
    issuerStep(new IssuerKeyTransitionsSqlite(db), first.purpose, first.parking_id, body.issuer_key);
}

/** The parking's side of a SET_ISSUER step every box has taken (or that no
 * box needs: a parking without boxes), in the caller's transaction. */
export async function applyIssuerStep(
  on: Executor,
  purpose: ControlPurpose,
  parkingId: number,
  issuerKeyHex: string,
): Promise<void> {
  await issuerStep(new IssuerKeyTransitions(on), purpose, parkingId, issuerKeyHex);
}

interface Transitions<R> {
  switchToSigned(parkingId: number, key: string): R;
  rotate(parkingId: number, key: string): R;
  forgetPrevious(parkingId: number, key: string): R;
}

function issuerStep<R>(
  keys: Transitions<R>,
  purpose: ControlPurpose,
  parkingId: number,
  issuerKeyHex: string,
): R | undefined {
  switch (purpose) {
    case 'set_access':
      return keys.switchToSigned(parkingId, issuerKeyHex);
    case 'rotate_install':
      return keys.rotate(parkingId, issuerKeyHex);
    case 'rotate_drop':
      return keys.forgetPrevious(parkingId, issuerKeyHex);
    case 'revoke':
      return undefined;
  }
}
