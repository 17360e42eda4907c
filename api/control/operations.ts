// The operator's control operations (issue 13): revoke a smart key, move a
// sealed parking to signed, rotate a signed parking's issuer key. Each one
// changes the service at once where it can (a revoked key is refused
// now), and queues the control commands its boxes need (control_commands),
// which the API's dispatcher delivers. Any process may run them (the admin
// CLI does): all of it is in the database.
//
// Each operation's transaction stays synchronous on SQLite's connection
// (ControlCommandsSqlite) while the smart keys, parkings and boxes it
// changes with its commands are not on the store (issue 18); the reports
// read the queue through the store.
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { sleep, type Clock } from '../../lib/clock.js';
import type { Db } from '../db/open.js';
import type { Store } from '../db/store.js';
import { DomainError } from '../domain-error.js';
import { BoxesSqlite, DEFAULT_SKEW_SECONDS } from '../repositories/boxes.js';
import { ParkingsSqlite, type AccessMode, type ParkingRow } from '../repositories/parkings.js';
import { SmartKeyRepository } from '../repositories/smart-keys.js';
import { applyIssuerStep } from './completion.js';
import { IssuerKeyTransitions } from './issuer-keys.js';
import {
  ControlCommandRepository,
  ControlCommandsSqlite,
  type ControlCommandRow,
  type ControlState,
} from './repository.js';

/** What an operation runs on: SQLite's connection for its synchronous
 * transaction, the store for its report (the API's context has both). */
export interface ControlDeps {
  readonly db: Db;
  readonly store: Store;
}

/** An operation that makes no sense as asked: one line for the operator (a
 * domain error of kind `refused`, api/domain-error.ts). */
export class ControlRefusal extends DomainError {
  override readonly name = 'ControlRefusal';

  constructor(message: string) {
    super('refused', message);
  }
}

/** Where a parking's access stands (after an operation), or undefined when there is no such parking. */
export interface AccessState {
  access_mode: AccessMode;
  issuer_public_key: string | null;
  issuer_previous_public_key: string | null;
  /** A new issuer key is on its way to the boxes; smart keys are signed with the current one until then. */
  switching: boolean;
}

export function accessStateOf(db: Db, parkingId: number): AccessState | undefined {
  const parking = new ParkingsSqlite(db).findById(parkingId);
  if (parking === undefined) return undefined;
  return {
    access_mode: parking.access_mode,
    issuer_public_key: parking.issuer_public_key,
    issuer_previous_public_key: parking.issuer_previous_public_key,
    switching: parking.issuer_next_public_key !== null,
  };
}

export interface DeliveryReport {
  module_id: number;
  kind: string;
  state: ControlState;
  attempts: number;
  last_status: string | null;
  last_error: string | null;
}

export interface OperationReport {
  operation: string;
  done: number;
  pending: number;
  failed: number;
  deliveries: DeliveryReport[];
}

export async function operationReport(store: Store, operation: string): Promise<OperationReport> {
  const deliveries = (await new ControlCommandRepository(store).listOfOperation(operation)).map(deliveryOf);
  const count = (state: ControlState): number => deliveries.filter((delivery) => delivery.state === state).length;
  return { operation, done: count('done'), pending: count('pending'), failed: count('failed'), deliveries };
}

function deliveryOf(row: ControlCommandRow): DeliveryReport {
  return {
    module_id: row.module_id,
    kind: row.kind,
    state: row.state,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
  };
}

/** Waits (polling the database, which another process settles) until no
 * delivery of the operation is pending, or `waitMs` has passed. */
export async function awaitOperation(
  store: Store,
  operation: string,
  waitMs: number,
  clock: Clock,
  pollMs = 100,
): Promise<OperationReport> {
  const deadline = clock.now() + waitMs;
  let report = await operationReport(store, operation);
  while (report.pending > 0 && clock.now() < deadline) {
    await sleep(clock, Math.min(pollMs, deadline - clock.now()));
    report = await operationReport(store, operation);
  }
  return report;
}

export interface RevokeResult extends OperationReport {
  smart_key_id: number;
  revoked_at: number;
  /** False when the key was revoked before (nothing new queued). */
  newly_revoked: boolean;
}

/**
 * Revokes a smart key: refused by the service at once (its open route, its
 * box logs' effects), and a REVOKE (key_id, until = its not_after) queued
 * for every box of its module list. A key past its not_after + skew gets no
 * REVOKE: boxes refuse it already. Run again, it changes nothing and reports.
 */
export async function revokeSmartKey(
  { db, store }: ControlDeps,
  keyId: number,
  nowMs: number,
  requestedBy: string,
): Promise<RevokeResult> {
  const keys = new SmartKeyRepository(db);
  const boxes = new BoxesSqlite(db);
  const commands = new ControlCommandsSqlite(db);
  const operation = `revoke:${keyId}`;
  const newly = commands.transaction(() => {
    const key = keys.findById(keyId);
    if (key === undefined) throw new ControlRefusal(`no smart key with id ${keyId}`);
    if (!keys.revoke(keyId, nowMs)) return false;
    const until = Math.floor(key.end_time / 1000);
    for (const moduleId of JSON.parse(key.module_ids) as number[]) {
      const box = boxes.findByModuleId(moduleId);
      if (box?.parking_id !== key.parking_id) continue;
      if (key.end_time + box.skew_seconds * 1000 < nowMs) continue; // the box refuses it as EXPIRED already
      commands.insert(
        {
          moduleId,
          kind: 'REVOKE',
          body: { entries: [{ key_id: keyId, until }] },
          operation,
          purpose: 'revoke',
          parkingId: key.parking_id,
          smartKeyId: keyId,
          requestedBy,
        },
        nowMs,
      );
    }
    return true;
  });
  const revokedAt = keys.findById(keyId)?.revoked_at ?? nowMs;
  return {
    smart_key_id: keyId,
    revoked_at: revokedAt,
    newly_revoked: newly,
    ...(await operationReport(store, operation)),
  };
}

export interface AccessResult extends OperationReport {
  parking_id: number;
  access_mode: 'sealed' | 'signed';
  issuer_public_key: string | null;
}

const fingerprint = (publicKeyHex: string): string => publicKeyHex.slice(0, 16);

function parkingOrRefuse(db: Db, parkingId: number): ParkingRow {
  const parking = new ParkingsSqlite(db).findById(parkingId);
  if (parking === undefined) throw new ControlRefusal(`no secured parking with id ${parkingId}`);
  return parking;
}

async function accessResult({ db, store }: ControlDeps, parkingId: number, operation: string): Promise<AccessResult> {
  const parking = parkingOrRefuse(db, parkingId);
  return {
    parking_id: parkingId,
    access_mode: parking.access_mode,
    issuer_public_key: parking.issuer_public_key,
    ...(await operationReport(store, operation)),
  };
}

/** Queues SET_ISSUER(issuerKey, previous) to every box of the parking; on a
 * parking without boxes, the step is taken at once (no box to wait for). */
function queueSetIssuer(
  db: Db,
  parking: ParkingRow,
  purpose: 'set_access' | 'rotate_install' | 'rotate_drop',
  operation: string,
  issuerKey: string,
  previous: string | null,
  nowMs: number,
  requestedBy: string,
): void {
  const commands = new ControlCommandsSqlite(db);
  const boxes = new BoxesSqlite(db).listOfParking(parking.id);
  for (const box of boxes) {
    commands.insert(
      {
        moduleId: box.module_id,
        kind: 'SET_ISSUER',
        body: { issuer_key: issuerKey, issuer_key_previous: previous },
        operation,
        purpose,
        parkingId: parking.id,
        requestedBy,
      },
      nowMs,
    );
  }
  if (boxes.length === 0) applyIssuerStep(db, purpose, parking.id, issuerKey);
}

/**
 * sealed -> signed: a next issuer pair, SET_ISSUER(next, none) to every box;
 * issuance switches once every box answered OK (in the transaction that
 * marks the last one done), or at once with `force`. While one is under way,
 * `force` switches it now; without, it is refused.
 */
export async function setAccessSigned(
  deps: ControlDeps,
  parkingId: number,
  options: { force: boolean },
  nowMs: number,
  requestedBy: string,
): Promise<AccessResult> {
  const { db } = deps;
  const commands = new ControlCommandsSqlite(db);
  const transitions = new IssuerKeyTransitions(db);
  const operation = commands.transaction(() => {
    const parking = parkingOrRefuse(db, parkingId);
    if (parking.access_mode === 'signed') throw new ControlRefusal(`parking ${parkingId} is already signed`);
    const next = parking.issuer_next_public_key;
    if (next !== null) {
      if (!options.force)
        throw new ControlRefusal(
          `parking ${parkingId} is already moving to signed (its boxes are getting the key); --force switches now`,
        );
      transitions.switchToSigned(parkingId, next);
      return `set_access:${parkingId}:${fingerprint(next)}`;
    }
    const pair = generateIssuerKeyPair();
    const publicHex = pair.publicKey.toString('hex');
    transitions.installNext(parkingId, pair.privateKey.toString('hex'), publicHex);
    const started = `set_access:${parkingId}:${fingerprint(publicHex)}`;
    queueSetIssuer(db, parking, 'set_access', started, publicHex, null, nowMs, requestedBy);
    if (options.force) transitions.switchToSigned(parkingId, publicHex);
    return started;
  });
  return accessResult(deps, parkingId, operation);
}

/** signed -> sealed is refused: its boxes would need K_park again. */
export function refuseSetAccessSealed(db: Db, parkingId: number): never {
  const parking = parkingOrRefuse(db, parkingId);
  if (parking.access_mode === 'sealed') throw new ControlRefusal(`parking ${parkingId} is already sealed`);
  throw new ControlRefusal(
    `parking ${parkingId} is signed: going back to sealed would put K_park on its boxes again, which parkbench does not do`,
  );
}

/**
 * Issuer rotation (docs/protocol.md, Security notes): SET_ISSUER(new,
 * current) to every box; once all answered OK the service signs with the
 * new key (current -> previous). The final SET_ISSUER(new, none) is queued
 * by scheduleDueDrops once no key signed by the previous one is valid.
 */
export async function rotateIssuer(
  deps: ControlDeps,
  parkingId: number,
  nowMs: number,
  requestedBy: string,
): Promise<AccessResult> {
  const { db } = deps;
  const commands = new ControlCommandsSqlite(db);
  const operation = commands.transaction(() => {
    const parking = parkingOrRefuse(db, parkingId);
    if (parking.access_mode === 'sealed' || parking.issuer_public_key === null) {
      if (parking.issuer_next_public_key !== null)
        throw new ControlRefusal(`parking ${parkingId} is still moving to signed; rotate once it is signed`);
      throw new ControlRefusal(
        `parking ${parkingId} is sealed: it has no issuer key to rotate (set-access --access signed first)`,
      );
    }
    if (parking.issuer_next_public_key !== null)
      throw new ControlRefusal(`a rotation of parking ${parkingId} is under way: its new key is not on every box yet`);
    if (parking.issuer_previous_public_key !== null) {
      throw new ControlRefusal(
        `the last rotation of parking ${parkingId} is not finished: its boxes keep the previous key until every key it signed has expired`,
      );
    }
    const pair = generateIssuerKeyPair();
    const publicHex = pair.publicKey.toString('hex');
    new IssuerKeyTransitions(db).installNext(parkingId, pair.privateKey.toString('hex'), publicHex);
    const started = `rotate_install:${parkingId}:${fingerprint(publicHex)}`;
    queueSetIssuer(db, parking, 'rotate_install', started, publicHex, parking.issuer_public_key, nowMs, requestedBy);
    return started;
  });
  return accessResult(deps, parkingId, operation);
}

/**
 * The last step of every rotation: SET_ISSUER(current, none) to the boxes of
 * a parking that still has a previous key, once no smart key it signed is
 * valid (end_time + the largest skew of its boxes is past). Idempotent
 * (one operation per current key, whichever process queues it first).
 * Returns the operations queued.
 */
// SQLite only until the parkings, boxes and smart keys it reads move to the store (issue 18)
export function scheduleDueDrops(db: Db, nowMs: number): string[] {
  const parkings = db
    .prepare<[], ParkingRow>(
      'SELECT * FROM secured_parkings WHERE issuer_previous_public_key IS NOT NULL AND issuer_next_public_key IS NULL AND issuer_public_key IS NOT NULL',
    )
    .all();
  if (parkings.length === 0) return [];
  const commands = new ControlCommandsSqlite(db);
  const skewOf = db.prepare<[number], { skew: number | null }>(
    'SELECT max(skew_seconds) AS skew FROM boxes WHERE parking_id = ?',
  );
  const stillValid = db.prepare<[number, string, number], { one: number }>(
    'SELECT 1 AS one FROM smart_keys WHERE parking_id = ? AND lower(signed_by) = lower(?) AND end_time >= ? LIMIT 1',
  );
  const queued: string[] = [];
  for (const parking of parkings) {
    const current = parking.issuer_public_key ?? '';
    const previous = parking.issuer_previous_public_key ?? '';
    const operation = `rotate_drop:${parking.id}:${fingerprint(current)}`;
    if (commands.hasOperation(operation)) continue;
    const skewMs = (skewOf.get(parking.id)?.skew ?? DEFAULT_SKEW_SECONDS) * 1000;
    if (stillValid.get(parking.id, previous, nowMs - skewMs) !== undefined) continue;
    commands.transaction(() => {
      if (commands.hasOperation(operation)) return;
      queueSetIssuer(
        db,
        parking,
        'rotate_drop',
        operation,
        current,
        null,
        nowMs,
        'rotation: no key signed by the previous issuer key is valid any more',
      );
      queued.push(operation);
    });
  }
  return queued;
}

export interface PendingControl {
  id: number;
  kind: string;
  purpose: string;
  attempts: number;
  last_status: string | null;
  last_error: string | null;
  created_at: string;
}

/** The pending control commands of a box, oldest first (`admin box status`). */
// SQLite only until the box status (api/boxes/status.ts) moves to the store (issue 18)
export function pendingControlOf(db: Db, moduleId: number): PendingControl[] {
  const rows = db
    .prepare<[number], ControlCommandRow>(
      "SELECT * FROM control_commands WHERE module_id = ? AND state = 'pending' ORDER BY id",
    )
    .all(moduleId);
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    purpose: row.purpose,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: new Date(row.created_at).toISOString(),
  }));
}
