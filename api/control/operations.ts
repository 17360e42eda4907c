// The operator's control operations: revoke a smart key, move a
// sealed parking to signed, rotate a signed parking's issuer key. Each one
// changes the service at once where it can (a revoked key is refused
// now), and queues the control commands its boxes need (control_commands),
// which the API's dispatcher delivers. Any process may run them (the admin
// CLI does): all of it is in the database.
//
// Each operation is one transaction on the store (BEGIN IMMEDIATE on
// SQLite; on PostgreSQL the parking's row is locked FOR NO KEY UPDATE, or the smart
// key's revocation is one conditional UPDATE), so two processes running the
// same operation at once queue its commands once.
import { sql } from 'kysely';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { sleep, type Clock } from '../../lib/clock.js';
import type { RowLocks } from '../db/row-locks.js';
import { changed, type Executor, type Store } from '../db/store.js';
import { DomainError } from '../http/domain-error.js';
import { DEFAULT_SKEW_SECONDS } from '../boxes/index.js';
import type { AccessMode } from '../parkings/index.js';
import { applyIssuerStep } from './completion.js';
import { IssuerKeyTransitions } from './issuer-keys.js';
import { reSignLiveKeys } from './re-sign.js';
import { ControlCommandRepository, type ControlCommandRow, type ControlState } from './repository.js';

/** What an operation runs on (the API's context has it; the CLI makes one). */
export interface ControlDeps {
  readonly store: Store;
}

/** An operation that makes no sense as asked: one line for the operator (a
 * domain error of kind `refused`, api/http/domain-error.ts). */
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

/** The access columns of a parking, read in an operation's transaction
 * (PARKINGS owns the parkings' repository: a small query of ours). */
interface ParkingAccess {
  id: number;
  access_mode: AccessMode;
  issuer_public_key: string | null;
  issuer_previous_public_key: string | null;
  issuer_next_public_key: string | null;
}

/** The parking's access columns; `lock` takes its row lock on PostgreSQL
 * (FOR NO KEY UPDATE: a second operation on it waits for the first to commit, then
 * reads what it wrote). SQLite's write transaction holds the file already. */
async function parkingAccessOf(
  on: Executor,
  locks: RowLocks,
  parkingId: number,
  lock = false,
): Promise<ParkingAccess | undefined> {
  const query = on
    .selectFrom('secured_parkings')
    .select(['id', 'access_mode', 'issuer_public_key', 'issuer_previous_public_key', 'issuer_next_public_key'])
    .where('id', '=', parkingId);
  return (lock ? locks.lockForUpdate(query) : query).executeTakeFirst();
}

export async function accessStateOf(store: Store, parkingId: number): Promise<AccessState | undefined> {
  const parking = await parkingAccessOf(store.kysely, store, parkingId);
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
  /** Deliveries an operator gave up on (admin control skip). */
  skipped: number;
  deliveries: DeliveryReport[];
}

export async function operationReport(store: Store, operation: string): Promise<OperationReport> {
  const deliveries = (await new ControlCommandRepository(store).listOfOperation(operation)).map(deliveryOf);
  const count = (state: ControlState): number => deliveries.filter((delivery) => delivery.state === state).length;
  return {
    operation,
    done: count('done'),
    pending: count('pending'),
    failed: count('failed'),
    skipped: count('skipped'),
    deliveries,
  };
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
 * Of two revocations at once (any processes), the conditional UPDATE lets
 * one through: the other waits on the row (PostgreSQL) or the file (SQLite)
 * and finds it revoked.
 */
export async function revokeSmartKey(
  { store }: ControlDeps,
  keyId: number,
  nowMs: number,
  requestedBy: string,
): Promise<RevokeResult> {
  const commands = new ControlCommandRepository(store);
  const operation = `revoke:${keyId}`;
  const newly = await store.kysely.transaction().execute(async (trx) => {
    const key = await trx
      .selectFrom('smart_keys')
      .select(['parking_id', 'module_ids', 'end_time'])
      .where('id', '=', keyId)
      .executeTakeFirst();
    if (key === undefined) throw new ControlRefusal(`no smart key with id ${keyId}`);
    const revoked = await trx
      .updateTable('smart_keys')
      .set({ revoked_at: nowMs })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (changed(revoked) !== 1) return false;
    const until = Math.floor(key.end_time / 1000);
    const moduleIds = JSON.parse(key.module_ids) as number[];
    const boxes =
      moduleIds.length === 0
        ? []
        : await trx
            .selectFrom('boxes')
            .select(['module_id', 'parking_id', 'skew_seconds'])
            .where('module_id', 'in', moduleIds)
            .execute();
    for (const moduleId of moduleIds) {
      const box = boxes.find((row) => row.module_id === moduleId);
      if (box?.parking_id !== key.parking_id) continue;
      if (key.end_time + box.skew_seconds * 1000 < nowMs) continue; // the box refuses it as EXPIRED already
      await commands.insert(
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
        trx,
      );
    }
    return true;
  });
  const row = await store.kysely
    .selectFrom('smart_keys')
    .select('revoked_at')
    .where('id', '=', keyId)
    .executeTakeFirst();
  return {
    smart_key_id: keyId,
    revoked_at: row?.revoked_at ?? nowMs,
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

async function parkingOrRefuse(on: Executor, locks: RowLocks, parkingId: number, lock = false): Promise<ParkingAccess> {
  const parking = await parkingAccessOf(on, locks, parkingId, lock);
  if (parking === undefined) throw new ControlRefusal(`no secured parking with id ${parkingId}`);
  return parking;
}

async function accessResult(store: Store, parkingId: number, operation: string): Promise<AccessResult> {
  const parking = await parkingOrRefuse(store.kysely, store, parkingId);
  return {
    parking_id: parkingId,
    access_mode: parking.access_mode,
    issuer_public_key: parking.issuer_public_key,
    ...(await operationReport(store, operation)),
  };
}

/** Queues SET_ISSUER(issuerKey, previous) to every box of the parking, in
 * the operation's transaction; on a parking without boxes, the step is taken
 * at once (no box to wait for). */
async function queueSetIssuer(
  store: Store,
  on: Executor,
  parkingId: number,
  purpose: 'set_access' | 'rotate_install' | 'rotate_drop',
  operation: string,
  issuerKey: string,
  previous: string | null,
  nowMs: number,
  requestedBy: string,
): Promise<void> {
  const commands = new ControlCommandRepository(store);
  const boxes = await on
    .selectFrom('boxes')
    .select('module_id')
    .where('parking_id', '=', parkingId)
    .orderBy('module_id')
    .execute();
  for (const box of boxes) {
    await commands.insert(
      {
        moduleId: box.module_id,
        kind: 'SET_ISSUER',
        body: { issuer_key: issuerKey, issuer_key_previous: previous },
        operation,
        purpose,
        parkingId,
        requestedBy,
      },
      nowMs,
      on,
    );
  }
  if (boxes.length === 0) await applyIssuerStep(on, purpose, parkingId, issuerKey);
}

/**
 * sealed -> signed: a next issuer pair, SET_ISSUER(next, none) to every box;
 * issuance switches once every box answered OK (in the transaction that
 * marks the last one done), or at once with `force`. While one is under way,
 * `force` switches it now; without, it is refused. Two at once (any
 * processes): the second reads the parking after the first committed and is
 * refused (or, with `force`, switches the first's key).
 */
export async function setAccessSigned(
  { store }: ControlDeps,
  parkingId: number,
  options: { force: boolean },
  nowMs: number,
  requestedBy: string,
): Promise<AccessResult> {
  const operation = await store.kysely.transaction().execute(async (trx) => {
    const transitions = new IssuerKeyTransitions(trx);
    const parking = await parkingOrRefuse(trx, store, parkingId, true);
    if (parking.access_mode === 'signed') throw new ControlRefusal(`parking ${parkingId} is already signed`);
    const next = parking.issuer_next_public_key;
    if (next !== null) {
      if (!options.force)
        throw new ControlRefusal(
          `parking ${parkingId} is already moving to signed (its boxes are getting the key); --force switches now`,
        );
      await transitions.switchToSigned(parkingId, next);
      return `set_access:${parkingId}:${fingerprint(next)}`;
    }
    const pair = generateIssuerKeyPair();
    const publicHex = pair.publicKey.toString('hex');
    await transitions.installNext(parkingId, pair.privateKey.toString('hex'), publicHex);
    const started = `set_access:${parkingId}:${fingerprint(publicHex)}`;
    await queueSetIssuer(store, trx, parkingId, 'set_access', started, publicHex, null, nowMs, requestedBy);
    if (options.force) await transitions.switchToSigned(parkingId, publicHex);
    return started;
  });
  return accessResult(store, parkingId, operation);
}

/** signed -> sealed is refused: its boxes would need K_park again. */
export async function refuseSetAccessSealed(store: Store, parkingId: number): Promise<never> {
  const parking = await parkingOrRefuse(store.kysely, store, parkingId);
  if (parking.access_mode === 'sealed') throw new ControlRefusal(`parking ${parkingId} is already sealed`);
  throw new ControlRefusal(
    `parking ${parkingId} is signed: going back to sealed would put K_park on its boxes again, which parkbench does not do`,
  );
}

/**
 * Issuer rotation (docs/protocol.md, Security notes): SET_ISSUER(new,
 * current) to every box; once all answered OK the service signs with the
 * new key (current -> previous). The final SET_ISSUER(new, none) is queued
 * by scheduleDueDrops once no key signed by the previous one is valid. Of
 * two rotations at once (any processes), the second is refused as one under
 * way.
 */
export async function rotateIssuer(
  { store }: ControlDeps,
  parkingId: number,
  nowMs: number,
  requestedBy: string,
  options: { reSign: boolean } = { reSign: false },
): Promise<AccessResult> {
  const operation = await store.kysely.transaction().execute(async (trx) => {
    const parking = await parkingOrRefuse(trx, store, parkingId, true);
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
    await new IssuerKeyTransitions(trx).installNext(parkingId, pair.privateKey.toString('hex'), publicHex);
    await trx
      .updateTable('secured_parkings')
      .set({ issuer_re_sign: options.reSign ? 1 : 0 })
      .where('id', '=', parkingId)
      .execute();
    const started = `rotate_install:${parkingId}:${fingerprint(publicHex)}`;
    await queueSetIssuer(
      store,
      trx,
      parkingId,
      'rotate_install',
      started,
      publicHex,
      parking.issuer_public_key,
      nowMs,
      requestedBy,
    );
    return started;
  });
  return accessResult(store, parkingId, operation);
}

/**
 * The last step of every rotation: SET_ISSUER(current, none) to the boxes of
 * a parking that still has a previous key, once no smart key it signed is
 * valid (end_time + the largest skew of its boxes is past) but revoked ones
 * (the service refuses them already; dropping the key makes their signature
 * useless at the boxes too). A rotation started with --re-sign first signs
 * the live keys again with the current key (re-sign.ts), a batch a call, so
 * its drop follows within a few polls. Idempotent
 * (one operation per current key, whichever process queues it first: the
 * check and the queueing are one transaction, under the parking's row lock
 * on PostgreSQL). Returns the operations queued.
 */
export async function scheduleDueDrops(store: Store, nowMs: number): Promise<string[]> {
  const { kysely } = store;
  const parkings = await kysely
    .selectFrom('secured_parkings')
    .select(['id', 'issuer_private_key', 'issuer_public_key', 'issuer_previous_public_key', 'issuer_re_sign'])
    .where('issuer_previous_public_key', 'is not', null)
    .where('issuer_next_public_key', 'is', null)
    .where('issuer_public_key', 'is not', null)
    .execute();
  if (parkings.length === 0) return [];
  const commands = new ControlCommandRepository(store);
  const queued: string[] = [];
  for (const parking of parkings) {
    const current = parking.issuer_public_key ?? '';
    const previous = parking.issuer_previous_public_key ?? '';
    const operation = `rotate_drop:${parking.id}:${fingerprint(current)}`;
    if (await commands.hasOperation(operation)) continue;
    const skew = await kysely
      .selectFrom('boxes')
      .select((eb) => eb.fn.max('skew_seconds').as('skew'))
      .where('parking_id', '=', parking.id)
      .executeTakeFirst();
    const skewMs = (skew?.skew ?? DEFAULT_SKEW_SECONDS) * 1000;
    if (parking.issuer_re_sign === 1 && parking.issuer_private_key !== null)
      await reSignLiveKeys(
        store,
        {
          id: parking.id,
          issuer_private_key: parking.issuer_private_key,
          issuer_public_key: current,
          issuer_previous_public_key: previous,
        },
        nowMs,
        skewMs,
      );
    const stillValid = await kysely
      .selectFrom('smart_keys')
      .select(sql<number>`1`.as('one'))
      .where('parking_id', '=', parking.id)
      .where(sql<string>`lower(signed_by)`, '=', previous.toLowerCase())
      .where('revoked_at', 'is', null)
      .where('end_time', '>=', nowMs - skewMs)
      .limit(1)
      .executeTakeFirst();
    if (stillValid !== undefined) continue;
    const queuedNow = await kysely.transaction().execute(async (trx) => {
      const locked = await parkingAccessOf(trx, store, parking.id, true);
      if (locked?.issuer_public_key !== current || locked.issuer_previous_public_key === null) return false;
      const exists = await trx
        .selectFrom('control_commands')
        .select(sql<number>`1`.as('one'))
        .where('operation', '=', operation)
        .limit(1)
        .executeTakeFirst();
      if (exists !== undefined) return false;
      await queueSetIssuer(
        store,
        trx,
        parking.id,
        'rotate_drop',
        operation,
        current,
        null,
        nowMs,
        'rotation: no key signed by the previous issuer key is valid any more',
      );
      return true;
    });
    if (queuedNow) queued.push(operation);
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
export async function pendingControlOf(store: Store, moduleId: number): Promise<PendingControl[]> {
  return (await pendingControlOfBoxes(store, [moduleId])).get(moduleId) ?? [];
}

/** The pending control commands of each of these boxes, oldest first: one query. */
export async function pendingControlOfBoxes(
  store: Store,
  moduleIds: readonly number[],
): Promise<Map<number, PendingControl[]>> {
  const byBox = new Map<number, PendingControl[]>();
  if (moduleIds.length === 0) return byBox;
  const rows = await store.kysely
    .selectFrom('control_commands')
    .select(['id', 'module_id', 'kind', 'purpose', 'attempts', 'last_status', 'last_error', 'created_at'])
    .where('module_id', 'in', moduleIds)
    .where('state', '=', 'pending')
    .orderBy('id')
    .execute();
  for (const { module_id: moduleId, ...row } of rows) {
    const list = byBox.get(moduleId) ?? [];
    list.push({ ...row, created_at: new Date(row.created_at).toISOString() });
    byBox.set(moduleId, list);
  }
  return byBox;
}
