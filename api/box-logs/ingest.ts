// The one path a box log takes, whoever sends it (POST /api/box_logs, MQTT
// ingestion): resolve ids -> verify -> dedupe -> insert -> session effects ->
// forwarding outbox (verified logs only, unless the parking forwards
// unverified ones too), all or nothing in one transaction. Validation of the raw
// JSON is validate.ts; callers with parsed messages build BoxLogInput
// themselves.
//
//   ingestBoxLogs(deps, entries, { source: 'http', userId })  // throws BoxLogRefusal (not_found, refused)
//   ingestBoxLogs(deps, entries, { source: 'mqtt', lookups }) // fo_user_id may be null; rows already read
import type { Transaction } from 'better-sqlite3';
import { statusName, type ParsedResponse } from '../../firmware-protocol/index.js';
import type { BoxLogStreamItem, EventPublisher } from '../events/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Db } from '../db/open.js';
import type { OutboxRepository } from '../forwarding/outbox.js';
import type { ForwardingWorker } from '../forwarding/worker.js';
import type { BoxLogRepository } from '../repositories/box-logs.js';
import type { BoxObservation, BoxesSqlite, BoxRow } from '../repositories/boxes.js';
import type { ParkingRow } from '../repositories/parkings.js';
import { applyVerifiedResponse, BatchRows, type EffectDeps } from './effects.js';
import { BoxLogRefusal, type BoxLogProblem } from './errors.js';
import { BoxLogLookups, memo, type LookupDeps } from './lookups.js';
import type { BoxLogInput, BoxLogResult, IngestOptions } from './types.js';
import { parseCreatedAt } from './validate.js';
import { verifiedResponses } from './verify.js';

/** What ingestion touches: its transaction and clock, the rows it reads, the
 * box logs, observations and outbox rows it writes, the session effects of a
 * verified response, the forwarding worker it wakes, and the event stream it
 * tells (api/events/: the logs stored, the boxes and forwarding they changed).
 * AppContext has them. */
export type BoxLogIngestDeps = EffectDeps &
  LookupDeps & {
    db: Db;
    clock: Pick<Clock, 'now'>;
    boxesSqlite: Pick<BoxesSqlite, 'findByModuleId' | 'noteObservation' | 'noteControlSequence'>;
    boxLogs: Pick<BoxLogRepository, 'insert'>;
    outbox: Pick<OutboxRepository, 'enqueue'>;
    forwarding: Pick<ForwardingWorker, 'notify'>;
    events: Pick<EventPublisher, 'publishBoxLogs' | 'publishBox' | 'publishForwarding'>;
  };

interface Resolved {
  box: BoxRow;
  parking: ParkingRow;
}

/**
 * not_found for ids that do not exist, naming which of which element; then
 * refused for ids that exist but do not fit (fo_user_id not the sender, a
 * smart key of another driver or parking, a box of another parking).
 */
function resolve(lookups: BoxLogLookups, entries: readonly BoxLogInput[], options: IngestOptions): Resolved[] {
  const { user, smartKey: key, box, parking } = lookups;
  const missing: BoxLogProblem[] = [];
  const unfit: BoxLogProblem[] = [];
  const resolved: Resolved[] = [];
  entries.forEach((entry, index) => {
    const path = `box_logs[${index}].box_log`;
    const parkingRow = parking(entry.secured_parking_id);
    const boxRow = box(entry.equipment_id);
    const keyRow = entry.smart_key_id === null ? null : key(entry.smart_key_id);
    if (entry.fo_user_id !== null && !user(entry.fo_user_id))
      missing.push({ path: `${path}.fo_user_id`, message: `no user with id ${entry.fo_user_id}` });
    if (keyRow === undefined)
      missing.push({ path: `${path}.smart_key_id`, message: `no smart key with id ${String(entry.smart_key_id)}` });
    if (!boxRow) missing.push({ path: `${path}.equipment_id`, message: `no box with module id ${entry.equipment_id}` });
    if (!parkingRow)
      missing.push({
        path: `${path}.secured_parking_id`,
        message: `no secured parking with id ${entry.secured_parking_id}`,
      });
    if (options.userId !== undefined && entry.fo_user_id !== options.userId) {
      unfit.push({ path: `${path}.fo_user_id`, message: 'must be the id of the authenticated user' });
    }
    if (keyRow && entry.fo_user_id !== null && keyRow.user_id !== entry.fo_user_id)
      unfit.push({ path: `${path}.smart_key_id`, message: 'is not a smart key of fo_user_id' });
    if (keyRow && keyRow.parking_id !== entry.secured_parking_id)
      unfit.push({ path: `${path}.smart_key_id`, message: 'is not a smart key of secured_parking_id' });
    if (boxRow && boxRow.parking_id !== entry.secured_parking_id)
      unfit.push({ path: `${path}.equipment_id`, message: 'is not a box of secured_parking_id' });
    if (boxRow && parkingRow) resolved.push({ box: boxRow, parking: parkingRow });
  });
  if (missing.length > 0) throw new BoxLogRefusal('not_found', missing.slice(0, 100));
  if (unfit.length > 0) throw new BoxLogRefusal('refused', unfit.slice(0, 100));
  return resolved;
}

/** The latest observation of each box in a batch (the one with the highest box_seq). */
function observe(
  observations: Map<number, BoxObservation>,
  box: BoxRow,
  response: ParsedResponse,
  happenedAt: number,
): void {
  const previous = observations.get(box.module_id);
  if (previous && previous.boxSeq >= response.boxSeq) return;
  observations.set(box.module_id, {
    moduleId: box.module_id,
    seenAt: happenedAt,
    boxSeq: response.boxSeq,
    boxTime: response.boxTime,
    driftSeconds: response.boxTime - Math.floor(happenedAt / 1000),
    batteryMv: response.batteryMv,
  });
}

/**
 * Stores a batch of box logs, all or nothing, and answers per log in order.
 * Throws BoxLogRefusal (not_found, refused) before anything is written. `created_at` is when the exchange happened (UTC,
 * `YYYY-MM-DD HH:MM:SS`); MQTT ingestion passes the time it received the
 * response. After a commit that queued logs for forwarding, the forwarding
 * worker is woken.
 */
export function ingestBoxLogs(
  ctx: BoxLogIngestDeps,
  entries: readonly BoxLogInput[],
  options: IngestOptions,
): BoxLogResult[] {
  const receivedAt = options.receivedAt ?? ctx.clock.now();
  // IMMEDIATE: take the write lock at BEGIN, so a second API process waits
  // (busy_timeout) instead of failing to upgrade a read transaction.
  const { results, queued, stored } = storeInTransaction(ctx).immediate(ctx, entries, options, receivedAt);
  if (queued.size > 0) ctx.forwarding.notify();
  // After the transaction: in a group commit unit the hub waits for its
  // COMMIT (api/events/hub.ts), so a rolled-back log is never shown.
  ctx.events.publishBoxLogs(stored.items);
  for (const moduleId of stored.boxes) ctx.events.publishBox(moduleId);
  for (const parkingId of queued) ctx.events.publishForwarding(parkingId);
  return results;
}

/** What a batch stored, for the event stream: its new logs as stream items, the boxes whose state they changed. */
interface Stored {
  items: BoxLogStreamItem[];
  boxes: Iterable<number>;
}

/** The stream item of a stored log (GET /api/operator/box_logs's, plus via and latency), built from what is at hand. */
function streamItem(
  id: number,
  entry: BoxLogInput,
  options: IngestOptions,
  response: ParsedResponse | null,
  sessionId: number | null,
  receivedAt: number,
  receivedAtIso: string,
): BoxLogStreamItem {
  const created = parseCreatedAt(entry.created_at);
  return {
    id,
    source: options.source,
    equipment_id: entry.equipment_id,
    secured_parking_id: entry.secured_parking_id,
    fo_user_id: entry.fo_user_id,
    smart_key_id: entry.smart_key_id,
    session_id: sessionId,
    type: entry.type,
    command: entry.command,
    response: entry.response,
    offline: entry.offline,
    created_at: entry.created_at,
    verified: response !== null,
    box_seq: response?.boxSeq ?? null,
    status: response === null ? null : (statusName(response.status) ?? null),
    received_at: receivedAtIso,
    via: options.source,
    latency_ms: created === undefined ? null : receivedAt - created,
  };
}

type StoreTransaction = Transaction<
  (
    ctx: BoxLogIngestDeps,
    entries: readonly BoxLogInput[],
    options: IngestOptions,
    receivedAt: number,
  ) => { results: BoxLogResult[]; queued: Set<number>; stored: Stored }
>;

// One transaction function per database, built once: db.transaction(fn)
// builds its wrappers anew at every call.
const storeTransactions = new WeakMap<Db, StoreTransaction>();

function storeInTransaction(ctx: BoxLogIngestDeps): StoreTransaction {
  let transaction = storeTransactions.get(ctx.db);
  if (transaction === undefined) {
    transaction = ctx.db.transaction(store);
    storeTransactions.set(ctx.db, transaction);
  }
  return transaction;
}

/** The body of ingestBoxLogs, run in its transaction (or savepoint). */
function store(
  ctx: BoxLogIngestDeps,
  entries: readonly BoxLogInput[],
  options: IngestOptions,
  receivedAt: number,
): { results: BoxLogResult[]; queued: Set<number>; stored: Stored } {
  const repository = ctx.boxLogs;
  /** Parkings with logs queued for forwarding. */
  const queued = new Set<number>();
  const items: BoxLogStreamItem[] = [];
  const receivedAtIso = new Date(receivedAt).toISOString();
  // The reads too are in the transaction: outside one, every read pays
  // for a snapshot of its own (WAL lock system calls, some 5% of a batch
  // under load), and ids checked here cannot vanish before the insert.
  const lookups = options.lookups ?? new BoxLogLookups(ctx);
  const resolved = resolve(lookups, entries, options);
  const commandBytes = memo((base64: string) => Buffer.from(base64, 'base64'));
  const responses = verifiedResponses(
    entries.map((entry, index) => ({
      response: entry.response,
      command: entry.command === null ? null : commandBytes(entry.command),
      box: (resolved[index] as Resolved).box,
    })),
  );
  const observations = new Map<number, BoxObservation>();
  const rows = new BatchRows(ctx);
  const outcome = entries.map((entry, index): BoxLogResult => {
    const response = responses[index] ?? null;
    const { box, parking } = resolved[index] as Resolved;
    const stored = repository.insert({
      source: options.source,
      entry,
      verified: response !== null,
      boxSeq: response?.boxSeq ?? null,
      status: response?.status ?? null,
      receivedAt,
    });
    if (stored.duplicate) return { id: stored.id, verified: true, duplicate: true };
    const sessionId = entry.smart_key_id === null ? null : (lookups.smartKey(entry.smart_key_id)?.session_id ?? null);
    items.push(streamItem(stored.id, entry, options, response, sessionId, receivedAt, receivedAtIso));
    if (response) {
      const happenedAt = parseCreatedAt(entry.created_at) ?? receivedAt;
      observe(observations, box, response, happenedAt);
      applyVerifiedResponse(ctx, { box, response, happenedAt, receivedAt }, rows);
    }
    // The filter is here, at enqueue time: an unverified log (which its
    // sender may have invented) is never queued for a parking that
    // forwards verified logs only, so no later change can send it.
    if (
      parking.forwarding_expose === 1 &&
      parking.forwarding_url &&
      (response !== null || parking.forwarding_unverified === 1)
    ) {
      ctx.outbox.enqueue(stored.id, parking.id, parking.forwarding_url, receivedAt);
      queued.add(parking.id);
    }
    return { id: stored.id, verified: response !== null, duplicate: false };
  });
  for (const observation of observations.values()) ctx.boxesSqlite.noteObservation(observation);
  return { results: outcome, queued, stored: { items, boxes: observations.keys() } };
}
