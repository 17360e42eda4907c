// The one path a box log takes, whoever sends it (POST /api/box_logs, MQTT
// ingestion): resolve ids -> verify -> dedupe -> insert -> session effects ->
// forwarding outbox (verified logs only, unless the parking forwards
// unverified ones too), all or nothing on the caller's transaction (a unit
// of the group commit, api/db/group-commit.ts). The logic is here and in
// effects.ts, the same on both engines; the rows are read and written by the
// engine's IngestStore (ingest-store.ts), a whole group at a time. Validation
// of the raw JSON is validate.ts; callers with parsed messages build
// BoxLogInput themselves.
//
//   groupCommit.run((on) => ingestBoxLogs(deps, on, entries, { source: 'http', userId }))  // throws BoxLogRefusal (not_found, refused)
//   ingestBoxLogs(deps, on, entries, { source: 'mqtt' }, lookups) // fo_user_id may be null; rows already read
// (The route stores the batches of a turn together, http-batches.ts: each
// checked by refusalOf, then one call for all.)
import {
  commandAadTail,
  echoIsAuthenticated,
  isAccessKind,
  statusName,
  type ParsedResponse,
} from '../../firmware-protocol/index.js';
import type { BoxLogStreamItem, EventPublisher } from '../events/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Executor } from '../db/store.js';
import type { BoxObservation, BoxRow } from '../boxes/index.js';
import type { StoredBoxLog } from './repository.js';
import type { ParkingRow } from '../parkings/index.js';
import { applyVerifiedResponse, sessionIdOf, type EffectDeps } from './effects.js';
import { BoxLogRefusal, type BoxLogProblem } from './errors.js';
import { BoxLogLookups, type OutboxEntry } from './ingest-store.js';
import type { BoxLogInput, BoxLogResult, IngestOptions } from './types.js';
import { parseCreatedAt } from '../http/time.js';
import { verifiedResponses } from './verify.js';

/** What ingestion touches: its clock, the rows it reads and writes (the
 * IngestStore of its engine, on the group commit's transaction), the end of
 * a session by an exit, the forwarding worker it wakes, and the event stream
 * it tells (api/events/: the logs stored, the boxes, sessions and forwarding
 * they changed). AppContext has them. */
export type BoxLogIngestDeps = EffectDeps & {
  clock: Pick<Clock, 'now'>;
  /** The forwarding worker (api/forwarding/worker.ts): told that logs were queued for it. */
  forwarding: { notify(): void };
  events: Pick<EventPublisher, 'publishBoxLogs' | 'publishBox' | 'publishForwarding' | 'publishSession'>;
};

/** Memoizes a lookup, `undefined` answers included. */
export function memo<K, V>(lookup: (key: K) => V): (key: K) => V {
  const cache = new Map<K, V>();
  return (key) => {
    if (cache.has(key)) return cache.get(key) as V;
    const value = lookup(key);
    cache.set(key, value);
    return value;
  };
}

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
  const user = (id: number) => lookups.user(id);
  const key = (id: number) => lookups.smartKey(id);
  const box = (id: number) => lookups.box(id);
  const parking = (id: number) => lookups.parking(id);
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

/** How far from its receipt an exchange's created_at may be and still time
 * the box's clock: a phone uploads at once when it is online (its own clock
 * a little off), and MQTT ingestion receives at once; an offline try
 * uploaded hours later, or a created_at its uploader made up, says nothing
 * of the box's clock now. */
export const CLOCK_READING_WINDOW_MS = 5 * 60_000;

/** When an exchange happened, as far as the service may believe its
 * uploader: its created_at, never after the service received it; and
 * whether it may time the box's clock. */
export function exchangeTime(createdAt: string, receivedAt: number): { happenedAt: number; timesClock: boolean } {
  const claimed = parseCreatedAt(createdAt) ?? receivedAt;
  return {
    happenedAt: Math.min(claimed, receivedAt),
    timesClock: Math.abs(claimed - receivedAt) <= CLOCK_READING_WINDOW_MS,
  };
}

/** The latest observation of each box in a batch (the one with the highest
 * box_seq). Its box_seq, box_time and battery are the box's own (the tag
 * covers them); when it was seen is bounded by its receipt, and it times
 * the box's clock only when its created_at is within CLOCK_READING_WINDOW_MS of it. */
function observe(
  observations: Map<number, BoxObservation>,
  box: BoxRow,
  response: ParsedResponse,
  { happenedAt, timesClock }: { happenedAt: number; timesClock: boolean },
): void {
  const previous = observations.get(box.module_id);
  if (previous && previous.boxSeq >= response.boxSeq) return;
  observations.set(box.module_id, {
    moduleId: box.module_id,
    seenAt: happenedAt,
    boxSeq: response.boxSeq,
    boxTime: response.boxTime,
    driftSeconds: timesClock ? response.boxTime - Math.floor(happenedAt / 1000) : null,
    batteryMv: response.batteryMv,
  });
}

/**
 * The entry as it is stored: an exchange whose answer authenticates the
 * access key it names (docs/protocol.md, What an answer proves) belongs to
 * that key, whoever uploads it: a smart key of the box's parking gives the
 * log its key and its driver; a key_id the service never issued, no key.
 * Anything else stays as its uploader described it (resolve checked that).
 */
function attributed(
  entry: BoxLogInput,
  response: ParsedResponse | null,
  box: BoxRow,
  lookups: BoxLogLookups,
): BoxLogInput {
  if (response === null || !isAccessKind(response.kind) || !echoIsAuthenticated(response)) return entry;
  const key = lookups.smartKey(response.keyId);
  if (key === undefined || key.parking_id !== box.parking_id)
    return entry.smart_key_id === null ? entry : { ...entry, smart_key_id: null };
  if (entry.smart_key_id === key.id && entry.fo_user_id === key.user_id) return entry;
  return { ...entry, smart_key_id: key.id, fo_user_id: key.user_id };
}

/**
 * Stores a batch of box logs, all or nothing, on `on` (a transaction: the
 * group commit's), and answers per log in order. Throws BoxLogRefusal
 * (not_found, refused) before anything is written. `created_at` is when the
 * exchange happened (UTC, `YYYY-MM-DD HH:MM:SS`); MQTT ingestion passes the
 * time it received the response. Once logs are queued for forwarding, the
 * forwarding worker is woken.
 */
export async function ingestBoxLogs(
  ctx: BoxLogIngestDeps,
  on: Executor,
  entries: readonly BoxLogInput[],
  options: IngestOptions,
  /** Rows already read in this transaction (MQTT ingestion read the boxes,
   * parkings, keys and users of its messages to build them); default: read here. */
  lookups: BoxLogLookups = new BoxLogLookups(ctx.ingestStore),
): Promise<BoxLogResult[]> {
  const receivedAt = options.receivedAt ?? ctx.clock.now();
  const { results, queued, stored } = await store(ctx, on, entries, options, receivedAt, lookups);
  if (queued.size > 0) ctx.forwarding.notify();
  // In a group commit unit the hub waits for its COMMIT (api/events/hub.ts),
  // so a rolled-back log is never shown.
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

/** The body of ingestBoxLogs, on its transaction: reads, then the pure
 * decisions (resolve, verify), then the writes, each set-based. */
async function store(
  ctx: BoxLogIngestDeps,
  on: Executor,
  entries: readonly BoxLogInput[],
  options: IngestOptions,
  receivedAt: number,
  lookups: BoxLogLookups,
): Promise<{ results: BoxLogResult[]; queued: Set<number>; stored: Stored }> {
  const items: BoxLogStreamItem[] = [];
  const receivedAtIso = new Date(receivedAt).toISOString();
  // The reads too are in the transaction: ids checked here cannot vanish
  // before the insert. One query a table for the whole group (MQTT
  // ingestion and the HTTP batches of a turn read their rows already:
  // nothing more is read then).
  await loadNamedRows(on, lookups, entries);
  const resolved = resolve(lookups, entries, options);
  const commandBytes = memo((base64: string) => Buffer.from(base64, 'base64'));
  const responses = verifiedResponses(
    entries.map((entry, index) => ({
      response: entry.response,
      command: entry.command === null ? null : commandBytes(entry.command),
      box: (resolved[index] as Resolved).box,
    })),
  );
  // The keys of verified access responses, then their sessions, read for
  // update (PostgreSQL): another process moving one of them waits for this
  // commit, and this one for its.
  await lookups.load(on, {
    smartKeys: responses.flatMap((response) =>
      response !== null && isAccessKind(response.kind) ? [response.keyId] : [],
    ),
  });
  const sessionIds: number[] = [];
  responses.forEach((response, index) => {
    const sessionId = response && sessionIdOf(lookups, { box: (resolved[index] as Resolved).box, response });
    if (sessionId !== undefined && sessionId !== null) sessionIds.push(sessionId);
  });
  await lookups.loadSessions(on, sessionIds);

  const stored = entries.map((entry, index) =>
    attributed(entry, responses[index] ?? null, (resolved[index] as Resolved).box, lookups),
  );
  const logs = stored.map((entry, index): StoredBoxLog => ({
    source: options.source,
    entry,
    verified: responses[index] !== null,
    boxSeq: responses[index]?.boxSeq ?? null,
    status: responses[index]?.status ?? null,
    receivedAt,
    messageDigest: options.source === 'mqtt' && responses[index] === null ? (entry.mqtt_message_digest ?? null) : null,
  }));
  const inserted = await ctx.ingestStore.insertLogs(on, logs);
  /** Parkings with logs queued for forwarding. */
  const queued = new Set<number>();
  const outbox: OutboxEntry[] = [];
  const observations = new Map<number, BoxObservation>();
  const results: BoxLogResult[] = [];
  for (const [index, entry] of stored.entries()) {
    const row = inserted[index] as { id: number; duplicate: boolean };
    if (row.duplicate) {
      results.push({ id: row.id, verified: responses[index] !== null, duplicate: true });
      continue;
    }
    const response = responses[index] ?? null;
    const { box, parking } = resolved[index] as Resolved;
    const sessionId = entry.smart_key_id === null ? null : (lookups.smartKey(entry.smart_key_id)?.session_id ?? null);
    items.push(streamItem(row.id, entry, options, response, sessionId, receivedAt, receivedAtIso));
    if (response) {
      const time = exchangeTime(entry.created_at, receivedAt);
      const { happenedAt } = time;
      observe(observations, box, response, time);
      const commandNonce = commandAadTail(entry.command === null ? null : commandBytes(entry.command));
      await applyVerifiedResponse(ctx, on, { box, response, commandNonce, happenedAt, receivedAt }, lookups);
    }
    // The filter is here, at enqueue time: an unverified log (which its
    // sender may have invented) is never queued for a parking that
    // forwards verified logs only, so no later change can send it.
    if (
      parking.forwarding_expose === 1 &&
      parking.forwarding_url &&
      (response !== null || parking.forwarding_unverified === 1)
    ) {
      outbox.push({ boxLogId: row.id, parkingId: parking.id, url: parking.forwarding_url });
      queued.add(parking.id);
    }
    results.push({ id: row.id, verified: response !== null, duplicate: false });
  }
  await ctx.ingestStore.enqueueOutbox(on, outbox, receivedAt);
  await ctx.ingestStore.noteObservations(on, [...observations.values()]);
  return { results, queued, stored: { items, boxes: observations.keys() } };
}

/** Reads the users, smart keys, boxes and parkings the entries name (those not read yet), one query a table. */
export function loadNamedRows(on: Executor, lookups: BoxLogLookups, entries: readonly BoxLogInput[]): Promise<void> {
  return lookups.load(on, {
    users: idsOf(entries, (entry) => entry.fo_user_id),
    smartKeys: idsOf(entries, (entry) => entry.smart_key_id),
    boxes: entries.map((entry) => entry.equipment_id),
    parkings: entries.map((entry) => entry.secured_parking_id),
  });
}

/** Why ingestBoxLogs would refuse the entries (resolve's not_found, then
 * refused), from rows already read (loadNamedRows); undefined if it would not. */
export function refusalOf(
  lookups: BoxLogLookups,
  entries: readonly BoxLogInput[],
  options: IngestOptions,
): BoxLogRefusal | undefined {
  try {
    resolve(lookups, entries, options);
    return undefined;
  } catch (error) {
    if (error instanceof BoxLogRefusal) return error;
    throw error;
  }
}

/** The ids a field names (nulls left out). */
function idsOf(entries: readonly BoxLogInput[], field: (entry: BoxLogInput) => number | null): number[] {
  const ids: number[] = [];
  for (const entry of entries) {
    const id = field(entry);
    if (id !== null) ids.push(id);
  }
  return ids;
}
