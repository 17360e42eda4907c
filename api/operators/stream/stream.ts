// The clients of GET /api/operator/events and what each is sent: first a
// snapshot (or, resuming within the replay window, every event it missed),
// then, every EVENTS_FLUSH_MS on the injected clock, at most one message per
// event name with what changed since its last one: the newest state of each
// box, session and parking's forwarding that changed (coalesced per key),
// the box logs stored (at most 200 a message, `dropped` counting the older
// ones left out; a replay sends them all, 200 a message), the control
// deliveries, each conformance run and kept run that changed.
//
// Message ids make a resume exact. A flush's messages are sorted by the
// oldest raw event each holds; a message's id is the id just below the next
// message's oldest event (the last one's: the hub's head), so when a client
// has received a message, every event up to its id was in what it received.
// Ids increase. A client that resumes from any id it was sent misses nothing.
//
// Cost: the raw events of an interval are read once per distinct client
// position, each entity is rendered once per flush (one read), and each
// message serialized once per position, whatever the number of clients.
//
// Reads are async (the store): a flush first builds every client's
// messages from the hub's events up to its head, then reads the entities
// they name in one go, then sends. One flush at a time (the next is
// scheduled when one ends). Events published during the reads wait for the
// next flush; an entity read then may already show their effect (messages
// carry newest states, so a later one repeats it at worst). A client that
// leaves during the reads is not written to; one that joins gets its
// snapshot (read from the hub's head at its arrival) before it joins the
// flushes. A read that fails (the database busy or gone) sends nothing: the
// clients keep their positions and the next flush tries again.
//
// Backpressure: nothing is queued per client. A client whose socket has not
// drained is skipped at a flush (what changed meanwhile is coalesced into
// its next message: it gets fewer, larger messages); one that stays
// congested for STALL_LIMIT_MS, or whose socket buffer passes
// MAX_BUFFERED_BYTES, is dropped (its EventSource reconnects and resumes
// with Last-Event-ID, or gets a snapshot). So a slow page costs at most one
// message of memory, never an unbounded queue.
//
// Owners: each client is for an operator and the token it was opened with
// (owners.ts). After the reads of a flush (or of a joining client) and
// before anything is sent, the stream reads those operators' current tokens
// (one statement for all clients); a client whose operator was removed or
// whose token was replaced, by any process on the database, is ended
// (`revoked`) and sent nothing more. A flush with nothing to send checks at
// least every OWNER_CHECK_MS, so a quiet stream ends too.
import type { Clock, TimerHandle } from '../../../lib/clock.js';
import type { EventHub } from '../../events/hub.js';
import { OWNER_CHECK_MS, stillHolds, type OperatorTokens, type StreamOwner } from './owners.js';
import type { FlushKeys, Rendered, StreamRenderer } from './render.js';
import type { BoxLogStreamItem, ControlDelivery, ConformanceRunLike, RawEvent, RunLike } from '../../events/types.js';

/** Box logs in one `box_logs` message. */
export const MAX_BOX_LOGS_PER_MESSAGE = 200;
/** A client congested this long is dropped, ms. */
export const STALL_LIMIT_MS = 30_000;
/** A client whose socket holds more than this, bytes, is dropped. */
export const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export type EventName =
  'snapshot' | 'boxes' | 'box_logs' | 'sessions' | 'forwarding' | 'control' | 'conformance' | 'run';

export interface OutgoingMessage {
  readonly id: string;
  readonly event: EventName;
  /** JSON text. */
  readonly data: string;
}

/** Where a client's messages go (the SSE reply, or a test's array). */
export interface StreamSink {
  send(message: OutgoingMessage): void;
  /** The socket's buffer is full: nothing more until it drains. */
  readonly congested: boolean;
  /** Bytes written and not yet handed to the kernel. */
  readonly bufferedBytes: number;
  /** Ends the stream (the app closes). */
  close(): void;
  /** Cuts the connection (a client that does not read: its buffered bytes go with it). */
  drop(): void;
}

export interface EventStreamOptions {
  readonly hub: EventHub;
  readonly renderer: Pick<StreamRenderer, 'render' | 'snapshot'>;
  readonly clock: Clock;
  /** EVENTS_FLUSH_MS. */
  readonly flushMs: number;
  readonly stallLimitMs?: number;
  readonly maxBufferedBytes?: number;
  /** The current tokens of the clients' operators (the operators table). */
  readonly operatorTokens: OperatorTokens;
  /** OWNER_CHECK_MS unless told otherwise. */
  readonly ownerCheckMs?: number;
  /** A read that failed (the flush or the snapshot is skipped). */
  readonly onError?: (error: unknown) => void;
}

export interface EventStreamCounters {
  clients: number;
  snapshots: number;
  /** Resumes served from the ring. */
  resumes: number;
  messages: number;
  /** Clients dropped for not reading. */
  dropped: number;
  /** Flushes a congested client was skipped at. */
  skipped: number;
  /** The most bytes a client's socket held at a flush (what a slow client costs). */
  peakBufferedBytes: number;
  /** Clients ended because their operator was removed or its token replaced. */
  revoked: number;
}

interface Client {
  readonly sink: StreamSink;
  readonly owner: StreamOwner;
  lastId: number;
  /** Resuming: its first deltas send every box log (200 a message), none dropped. */
  replaying: boolean;
  stalledSince: number | undefined;
  /** A resuming client's own drafts, between their building and their sending. */
  built?: { drafts: Draft[]; headId: number } | undefined;
}

/** A message of a flush before it is serialized (rendering is lazy: a
 * congested client stops early, and what it was not sent is never built). */
interface Draft {
  readonly event: EventName;
  /** The oldest raw event it holds. */
  readonly minId: number;
  readonly data: () => unknown;
  text?: string;
}

/** One flush's work: the entities its drafts name (read once, together),
 * what they rendered to, and the drafts of each position. */
interface FlushCache {
  readonly keys: { boxes: Set<number>; sessions: Set<number>; parkings: Set<number> } & FlushKeys;
  rendered: Rendered;
  /** Drafts of the clients at a position (same lastId, live). */
  readonly drafts: Map<number, { drafts: Draft[]; headId: number }>;
}

const NOTHING_RENDERED: Rendered = { boxes: new Map(), sessions: new Map(), forwarding: new Map() };

export class EventStream {
  readonly counters: EventStreamCounters = {
    clients: 0,
    snapshots: 0,
    resumes: 0,
    messages: 0,
    dropped: 0,
    skipped: 0,
    peakBufferedBytes: 0,
    revoked: 0,
  };
  readonly #clients = new Set<Client>();
  #timer: TimerHandle | undefined;
  #closed = false;
  #lastFlush: Promise<void> = Promise.resolve();
  #ownersCheckedAt = -Infinity;

  constructor(private readonly options: EventStreamOptions) {}

  /** A new client of `owner`: a snapshot, or the events after `lastEventId`
   * when the hub still has them all. Returns the function that removes it
   * (at once, also while its first messages are being read). */
  add(sink: StreamSink, lastEventId: number | undefined, owner: StreamOwner): () => void {
    const { hub } = this.options;
    const client: Client = { sink, owner, lastId: hub.headId, replaying: false, stalledSince: undefined };
    let removed = false;
    const join = async (): Promise<void> => {
      if (lastEventId !== undefined && hub.canResumeFrom(lastEventId)) {
        this.counters.resumes++;
        client.lastId = lastEventId;
        client.replaying = true;
        const cache = this.#newCache();
        this.#prepareDeltas(client, cache);
        cache.rendered = await this.#render(cache.keys);
        if (!(await this.#stillWanted(client, () => removed))) return;
        this.#sendDeltas(client, cache);
      } else {
        const snapshot = await this.#readSnapshot();
        if (!(await this.#stillWanted(client, () => removed))) return;
        this.#sendSnapshot(client, snapshot);
      }
      this.#clients.add(client);
      this.counters.clients = this.#clients.size;
      this.#schedule();
    };
    join().catch((error: unknown) => {
      // Nothing was sent: the client reconnects (EventSource does) and tries again.
      this.options.onError?.(error);
      if (!removed && !this.#closed) sink.close();
    });
    return () => {
      removed = true;
      this.#clients.delete(client);
      this.counters.clients = this.#clients.size;
    };
  }

  /** One flush of every client (the timer calls it every EVENTS_FLUSH_MS);
   * resolves when it has sent what it had (a failed read sends nothing).
   * Flushes run one after the other, never two at once: two would build
   * the same client's messages from the same position and send them twice. */
  flush(): Promise<void> {
    const next = this.#lastFlush.then(() => this.#flushOnce());
    this.#lastFlush = next.catch(() => undefined);
    return next;
  }

  async #flushOnce(): Promise<void> {
    const cache = this.#newCache();
    const now = this.options.clock.now();
    const snapshots: Client[] = [];
    const deltas: Client[] = [];
    for (const client of [...this.#clients]) {
      this.counters.peakBufferedBytes = Math.max(this.counters.peakBufferedBytes, client.sink.bufferedBytes);
      if (client.sink.congested) {
        client.stalledSince ??= now;
        const stalled = now - client.stalledSince >= (this.options.stallLimitMs ?? STALL_LIMIT_MS);
        if (stalled || client.sink.bufferedBytes > (this.options.maxBufferedBytes ?? MAX_BUFFERED_BYTES)) {
          this.counters.dropped++;
          this.#clients.delete(client);
          client.sink.drop();
        } else this.counters.skipped++;
        continue;
      }
      client.stalledSince = undefined;
      if (!this.options.hub.canResumeFrom(client.lastId)) snapshots.push(client);
      else {
        this.#prepareDeltas(client, cache);
        deltas.push(client);
      }
    }
    this.counters.clients = this.#clients.size;
    const sends = snapshots.length > 0 || deltas.some((client) => client.lastId < this.options.hub.headId);
    const ownersDue = now - this.#ownersCheckedAt >= (this.options.ownerCheckMs ?? OWNER_CHECK_MS);
    let snapshot: { headId: number; data: string } | undefined;
    try {
      if (snapshots.length > 0) snapshot = await this.#readSnapshot();
      if (deltas.length > 0) cache.rendered = await this.#render(cache.keys);
      // After the reads: what they saw was there before the check.
      if (sends || ownersDue) {
        await this.#holds([...this.#clients]);
        this.#ownersCheckedAt = now;
      }
    } catch (error) {
      this.options.onError?.(error);
      return;
    }
    if (this.#closed) return;
    for (const client of snapshots) if (this.#clients.has(client) && snapshot) this.#sendSnapshot(client, snapshot);
    for (const client of deltas) if (this.#clients.has(client)) this.#sendDeltas(client, cache);
  }

  /** A joining client, its first messages read: not removed meanwhile, and its operator still holds. */
  async #stillWanted(client: Client, removed: () => boolean): Promise<boolean> {
    if (removed() || this.#closed) return false;
    return (await this.#holds([client])) && !removed() && !this.#closed;
  }

  /** Whether each of these clients' operator still holds, read from the
   * store now; the others are ended (and removed). True when all hold. */
  async #holds(clients: readonly Client[]): Promise<boolean> {
    if (clients.length === 0) return true;
    const operatorIds = [...new Set(clients.map((client) => client.owner.operatorId))];
    const current = await this.options.operatorTokens(operatorIds);
    let all = true;
    for (const client of clients) {
      if (stillHolds(client.owner, current)) continue;
      all = false;
      this.#clients.delete(client);
      this.counters.revoked++;
      client.sink.close();
    }
    this.counters.clients = this.#clients.size;
    return all;
  }

  /** Stops the flushes and drops every client (the app closes). */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const client of this.#clients) client.sink.close();
    this.#clients.clear();
    this.counters.clients = 0;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = this.options.clock.setTimeout(() => {
      // The timer stays set until the flush ends: one flush at a time.
      void this.flush().finally(() => {
        this.#timer = undefined;
        if (this.#clients.size > 0) this.#schedule();
      });
    }, this.options.flushMs);
  }

  #newCache(): FlushCache {
    return {
      keys: { boxes: new Set(), sessions: new Set(), parkings: new Set() },
      rendered: NOTHING_RENDERED,
      drafts: new Map(),
    };
  }

  #render(keys: FlushKeys): Promise<Rendered> {
    return this.options.renderer.render(keys, this.options.clock.now());
  }

  /** The snapshot, with the hub's head as it was before the read: the
   * events after it come in the next flush (repeating, at worst, what the
   * read already saw). */
  async #readSnapshot(): Promise<{ headId: number; data: string }> {
    const { hub, renderer, clock } = this.options;
    const headId = hub.headId;
    return { headId, data: JSON.stringify(await renderer.snapshot(clock.now())) };
  }

  #sendSnapshot(client: Client, { headId, data }: { headId: number; data: string }): void {
    client.sink.send({ id: String(headId), event: 'snapshot', data });
    client.lastId = headId;
    client.replaying = false;
    this.counters.snapshots++;
    this.counters.messages++;
  }

  /** Builds the client's drafts (shared by the clients at its position) and
   * notes the entities they name, before the flush reads them. */
  #prepareDeltas(client: Client, cache: FlushCache): void {
    const { hub } = this.options;
    if (client.lastId >= hub.headId) return;
    if (!client.replaying && cache.drafts.has(client.lastId)) return;
    const built = { drafts: this.#drafts(client.lastId, client.replaying, cache), headId: hub.headId };
    if (client.replaying) client.built = built;
    else cache.drafts.set(client.lastId, built);
  }

  #sendDeltas(client: Client, cache: FlushCache): void {
    const built = client.replaying ? client.built : cache.drafts.get(client.lastId);
    client.built = undefined;
    if (built === undefined) return;
    const { drafts, headId } = built;
    for (let index = 0; index < drafts.length; index++) {
      const draft = drafts[index] as Draft;
      const next = drafts[index + 1];
      const id = next === undefined ? headId : next.minId - 1;
      draft.text ??= JSON.stringify(draft.data());
      client.sink.send({ id: String(id), event: draft.event, data: draft.text });
      this.counters.messages++;
      client.lastId = id;
      // The rest waits for the next flush (coalesced with what comes meanwhile).
      if (client.sink.congested && next !== undefined) return;
    }
    client.lastId = headId;
    client.replaying = false;
  }

  /** The messages that bring a client from `lastId` to the head, oldest event first. */
  #drafts(lastId: number, replaying: boolean, cache: FlushCache): Draft[] {
    const boxes = new Map<number, number>();
    const sessions = new Map<number, number>();
    const forwarding = new Map<number, number>();
    const conformance = new Map<string, { minId: number; run: ConformanceRunLike }>();
    const runs = new Map<string, { minId: number; run: RunLike }>();
    const logs: { id: number; item: BoxLogStreamItem }[] = [];
    const control: ControlDelivery[] = [];
    let controlMin = 0;
    const keep = (map: Map<number, number>, key: number, id: number): void => {
      if (!map.has(key)) map.set(key, id);
    };
    this.options.hub.forEachAfter(lastId, (event: RawEvent) => {
      switch (event.kind) {
        case 'box':
          keep(boxes, event.moduleId, event.id);
          break;
        case 'box_log':
          logs.push({ id: event.id, item: event.item });
          break;
        case 'session':
          keep(sessions, event.sessionId, event.id);
          break;
        case 'forwarding':
          keep(forwarding, event.parkingId, event.id);
          break;
        case 'control':
          if (control.length === 0) controlMin = event.id;
          control.push(event.delivery);
          break;
        case 'conformance': {
          const key = String(event.run.id);
          const known = conformance.get(key);
          conformance.set(key, { minId: known?.minId ?? event.id, run: event.run });
          break;
        }
        case 'run': {
          const known = runs.get(event.run.id);
          runs.set(event.run.id, { minId: known?.minId ?? event.id, run: event.run });
          break;
        }
      }
    });
    const drafts: Draft[] = [];
    // Events are visited oldest first: a key's first id is its oldest.
    const minOf = (map: Map<number, number>): number => map.values().next().value ?? 0;
    for (const moduleId of boxes.keys()) cache.keys.boxes.add(moduleId);
    for (const sessionId of sessions.keys()) cache.keys.sessions.add(sessionId);
    for (const parkingId of forwarding.keys()) cache.keys.parkings.add(parkingId);
    if (boxes.size > 0)
      drafts.push({
        event: 'boxes',
        minId: minOf(boxes),
        data: () => ({ boxes: present(cache.rendered.boxes, boxes.keys()) }),
      });
    if (sessions.size > 0)
      drafts.push({
        event: 'sessions',
        minId: minOf(sessions),
        data: () => ({ sessions: present(cache.rendered.sessions, sessions.keys()) }),
      });
    if (forwarding.size > 0)
      drafts.push({
        event: 'forwarding',
        minId: minOf(forwarding),
        data: () => ({
          forwarding: [...forwarding.keys()].flatMap((parkingId) => cache.rendered.forwarding.get(parkingId) ?? []),
        }),
      });
    if (control.length > 0) drafts.push({ event: 'control', minId: controlMin, data: () => ({ deliveries: control }) });
    for (const { minId, run } of conformance.values())
      drafts.push({ event: 'conformance', minId, data: () => ({ run }) });
    for (const { minId, run } of runs.values()) drafts.push({ event: 'run', minId, data: () => ({ run }) });
    drafts.push(...boxLogDrafts(logs, replaying));
    return drafts.sort((a, b) => a.minId - b.minId);
  }
}

/** The box logs of an interval: all of them 200 a message (a replay), or the
 * newest 200 with the count of the older ones left out. */
function boxLogDrafts(logs: readonly { id: number; item: BoxLogStreamItem }[], replaying: boolean): Draft[] {
  const first = logs[0];
  if (first === undefined) return [];
  if (!replaying || logs.length <= MAX_BOX_LOGS_PER_MESSAGE) {
    const shown = logs.slice(-MAX_BOX_LOGS_PER_MESSAGE);
    const dropped = logs.length - shown.length;
    return [{ event: 'box_logs', minId: first.id, data: () => ({ box_logs: shown.map((log) => log.item), dropped }) }];
  }
  const drafts: Draft[] = [];
  for (let start = 0; start < logs.length; start += MAX_BOX_LOGS_PER_MESSAGE) {
    const chunk = logs.slice(start, start + MAX_BOX_LOGS_PER_MESSAGE);
    drafts.push({
      event: 'box_logs',
      minId: (chunk[0] as { id: number }).id,
      data: () => ({ box_logs: chunk.map((log) => log.item), dropped: 0 }),
    });
  }
  return drafts;
}

/** The rendered entities of these keys; the ones no longer there left out. */
function present<K, V>(rendered: ReadonlyMap<K, V>, keys: Iterable<K>): V[] {
  const out: V[] = [];
  for (const key of keys) {
    const value = rendered.get(key);
    if (value !== undefined) out.push(value);
  }
  return out;
}
