// What an operation does once every one of its deliveries is done (called
// in the transaction that marks the last one done, or at once for an
// operation on a parking without boxes).
import type { Db } from '../db/open.js';
import { IssuerKeyTransitions } from './issuer-keys.js';
import { ControlCommandRepository, type ControlBody } from './repository.js';

export function completeOperation(db: Db, operation: string): void {
  const commands = new ControlCommandRepository(db);
  if (commands.unfinished(operation) > 0) return;
  const [first] = commands.listOfOperation(operation);
  if (first === undefined) return;
  const body = JSON.parse(first.body) as ControlBody;
  if (!('issuer_key' in body)) return; // a REVOKE: the key was refused in the service at once
  const keys = new IssuerKeyTransitions(db);
  switch (first.purpose) {
    case 'set_access':
      keys.switchToSigned(first.parking_id, body.issuer_key);
      return;
    case 'rotate_install':
      keys.rotate(first.parking_id, body.issuer_key);
      return;
    case 'rotate_drop':
      keys.forgetPrevious(first.parking_id, body.issuer_key);
      return;
    case 'revoke':
      return;
  }
}
