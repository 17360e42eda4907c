// What an operation does once every one of its deliveries is done (called
// in the transaction that marks the last one done, or at once for an
// operation on a parking without boxes).
import type { Executor } from '../db/store.js';
import { IssuerKeyTransitions } from './issuer-keys.js';
import type { ControlPurpose } from './repository.js';

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
    case 'restore':
      return undefined;
  }
}
