// The event hub: domain code publishes raw events (types.ts), each gets the
// next id, and a ring buffer keeps them for EVENTS_REPLAY_SECONDS and at most
// EVENTS_REPLAY_MAX of them, so a client that reconnects within the window
// misses nothing (stream.ts replays from its Last-Event-ID). Past the cap or
// the window the oldest go; a resume from before them gets a snapshot.
//
// Publishing is on the ingestion path: it allocates one small object per
// event and touches no JSON, no database and no client (stream.ts reads the
// ring once per flush). Inside a group commit unit it waits for the COMMIT
// (api/db/group-commit.ts afterCommit): a unit rolled back publishes nothing.
//
// On PostgreSQL the events of every API process on the database reach every
// other's hub (relay.ts): each locally published event is also handed to
// `onLocal` (after the COMMIT, as it enters the ring), and the relay pushes
// the other processes' events with `receive`, never handed back. When the
// relay may have missed some (its connection was lost), `markGap` makes
// every client's position one the hub cannot resume from: each gets a
// snapshot at the next flush.
//
// Ids start at the clock's milliseconds times 1,000 when the hub is made:
// they increase within a process, and the ids of an earlier process (which
// started earlier and published fewer than 1,000 events a millisecond) are
// all below this one's first, so its clients get a snapshot, not another
// process's deltas.
import type { Clock } from '../../lib/clock.js';
import type {
  BoxLogStreamItem,
  ConformanceRunLike,
  ControlDelivery,
  EventPublisher,
  RawEvent,
  RunLike,
} from './types.js';

/** The kinds as stored in the ring (one byte each). */
const KINDS = ['box', 'box_log', 'session', 'forwarding', 'control', 'conformance', 'run'] as const;
type Kind = (typeof KINDS)[number];
const KIND_CODE: Record<Kind, number> = {
  box: 0,
  box_log: 1,
  session: 2,
  forwarding: 3,
  control: 4,
  conformance: 5,
  run: 6,
};

export interface EventHubOptions {
  readonly clock: Pick<Clock, 'now'>;
  /** How long events are kept for a resume, ms (EVENTS_REPLAY_SECONDS). */
  readonly replayMs: number;
  /** At most this many events are kept (EVENTS_REPLAY_MAX). */
  readonly maxEvents: number;
  /** Defers a publish to the COMMIT of the group commit unit running now;
   * false outside one (api/db/group-commit.ts afterCommit). */
  readonly afterCommit?: (callback: () => void) => boolean;
  /** Called with each event published in this process, as it enters the ring (relay.ts). */
  readonly onLocal?: (kind: RawEvent['kind'], payload: unknown) => void;
}

export interface EventHubCounters {
  published: number;
  /** Events dropped from the ring (too old, or past the cap). */
  evicted: number;
}

export class EventHub implements EventPublisher {
  readonly counters: EventHubCounters = { published: 0, evicted: 0 };
  // The ring, as parallel arrays: publishing allocates nothing of its own
  // (an object per event, kept 5 minutes, is what the garbage collector
  // pays for most: measured at several microseconds an event).
  readonly #kinds: Uint8Array;
  readonly #ats: Float64Array;
  /** A module id, session id or parking id; or the item, delivery or run (the publisher's own object). */
  readonly #payloads: unknown[];
  /** Index of the oldest event in the ring. */
  #start = 0;
  #count = 0;
  #headId: number;

  constructor(private readonly options: EventHubOptions) {
    if (!Number.isSafeInteger(options.maxEvents) || options.maxEvents < 1)
      throw new RangeError(`maxEvents must be a positive integer, got ${options.maxEvents}`);
    this.#kinds = new Uint8Array(options.maxEvents);
    this.#ats = new Float64Array(options.maxEvents);
    // Filled, not `new Array(n)`: a large holey array may be a dictionary to V8.
    this.#payloads = Array.from({ length: options.maxEvents }, () => 0);
    this.#headId = options.clock.now() * 1000;
  }

  /** The id of the newest event (the hub's first id minus one before any). */
  get headId(): number {
    return this.#headId;
  }

  /** The id of the oldest event kept (headId + 1 when none is kept). */
  get firstId(): number {
    this.#expire();
    return this.#headId - this.#count + 1;
  }

  /** Events kept now. */
  get size(): number {
    return this.#count;
  }

  /** Whether every event after `lastId` is still here: false when some were
   * dropped, or when `lastId` is no id of this hub's (newer than its head,
   * or from before it started). */
  canResumeFrom(lastId: number): boolean {
    return Number.isSafeInteger(lastId) && lastId >= this.firstId - 1 && lastId <= this.#headId;
  }

  /** Calls `visit` with every event after `lastId`, oldest first, up to the head now. */
  forEachAfter(lastId: number, visit: (event: RawEvent) => void): void {
    this.#expire();
    const first = this.#headId - this.#count + 1;
    const from = Math.max(lastId + 1, first);
    const capacity = this.#kinds.length;
    for (let id = from; id <= this.#headId; id++) {
      const at = (this.#start + (id - first)) % capacity;
      visit(this.#event(id, at));
    }
  }

  #event(id: number, index: number): RawEvent {
    const at = this.#ats[index] as number;
    const payload = this.#payloads[index];
    switch (KINDS[this.#kinds[index] as number] as Kind) {
      case 'box':
        return { id, at, kind: 'box', moduleId: payload as number };
      case 'box_log':
        return { id, at, kind: 'box_log', item: payload as BoxLogStreamItem };
      case 'session':
        return { id, at, kind: 'session', sessionId: payload as number };
      case 'forwarding':
        return { id, at, kind: 'forwarding', parkingId: payload as number };
      case 'control':
        return { id, at, kind: 'control', delivery: payload as ControlDelivery };
      case 'conformance':
        return { id, at, kind: 'conformance', run: payload as ConformanceRunLike };
      case 'run':
        return { id, at, kind: 'run', run: payload as RunLike };
    }
  }

  publishBoxLogs(items: readonly BoxLogStreamItem[]): void {
    if (items.length === 0) return;
    this.#afterCommit(() => {
      for (const item of items) this.#push(KIND_CODE.box_log, item);
    });
  }

  publishBox(moduleId: number): void {
    this.#afterCommit(() => this.#push(KIND_CODE.box, moduleId));
  }

  publishSession(sessionId: number): void {
    this.#afterCommit(() => this.#push(KIND_CODE.session, sessionId));
  }

  publishForwarding(parkingId: number): void {
    this.#afterCommit(() => this.#push(KIND_CODE.forwarding, parkingId));
  }

  publishControl(delivery: ControlDelivery): void {
    this.#afterCommit(() => this.#push(KIND_CODE.control, delivery));
  }

  publishConformance(run: ConformanceRunLike): void {
    this.#afterCommit(() => this.#push(KIND_CODE.conformance, run));
  }

  publishRun(run: RunLike): void {
    this.#afterCommit(() => this.#push(KIND_CODE.run, run));
  }

  #afterCommit(publish: () => void): void {
    if (this.options.afterCommit?.(publish) !== true) publish();
  }

  /** Events of another process (relay.ts): kept as this process's own are, never handed to onLocal. */
  receive(kind: RawEvent['kind'], payloads: readonly unknown[]): void {
    for (const payload of payloads) this.#push(KIND_CODE[kind], payload, false);
  }

  /** Some events may be missing after the head: every position up to it
   * becomes one the hub cannot resume from (the clients get a snapshot). */
  markGap(): void {
    while (this.#count > 0) this.#dropOldest();
    this.#headId++;
  }

  #push(kind: number, payload: unknown, local = true): void {
    const capacity = this.#kinds.length;
    if (this.#count === capacity) this.#dropOldest();
    const index = (this.#start + this.#count) % capacity;
    this.#kinds[index] = kind;
    this.#ats[index] = this.options.clock.now();
    this.#payloads[index] = payload;
    this.#headId++;
    this.#count++;
    this.counters.published++;
    if (local) this.options.onLocal?.(KINDS[kind] as Kind, payload);
    if (this.#headId % 256 === 0) this.#expire(); // now and then: the window, not only the cap
  }

  /** Drops events older than the window. */
  #expire(): void {
    const oldest = this.options.clock.now() - this.options.replayMs;
    while (this.#count > 0 && (this.#ats[this.#start] as number) < oldest) this.#dropOldest();
  }

  #dropOldest(): void {
    this.#payloads[this.#start] = 0; // the item may go
    this.#start = (this.#start + 1) % this.#kinds.length;
    this.#count--;
    this.counters.evicted++;
  }
}
