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
// Ids start at the clock's milliseconds times 1,000 when the hub is made:
// they increase within a process, and the ids of an earlier process (which
// started earlier and published fewer than 1,000 events a millisecond) are
// all below this one's first, so its clients get a snapshot, not another
// process's deltas.
import type { Clock } from '../../lib/clock.js';
import type { BoxLogStreamItem, ConformanceRunLike, ControlDelivery, EventPublisher, RawEvent } from './types.js';

/** RawEvent without what the hub assigns. */
type Published = RawEvent extends infer E ? (E extends RawEvent ? Omit<E, 'id' | 'at'> : never) : never;

export interface EventHubOptions {
  readonly clock: Pick<Clock, 'now'>;
  /** How long events are kept for a resume, ms (EVENTS_REPLAY_SECONDS). */
  readonly replayMs: number;
  /** At most this many events are kept (EVENTS_REPLAY_MAX). */
  readonly maxEvents: number;
  /** Defers a publish to the COMMIT of the group commit unit running now;
   * false outside one (api/db/group-commit.ts afterCommit). */
  readonly afterCommit?: (callback: () => void) => boolean;
}

export interface EventHubCounters {
  published: number;
  /** Events dropped from the ring (too old, or past the cap). */
  evicted: number;
}

export class EventHub implements EventPublisher {
  readonly counters: EventHubCounters = { published: 0, evicted: 0 };
  readonly #ring: (RawEvent | undefined)[];
  /** Index of the oldest event in #ring. */
  #start = 0;
  #count = 0;
  #headId: number;

  constructor(private readonly options: EventHubOptions) {
    if (!Number.isSafeInteger(options.maxEvents) || options.maxEvents < 1)
      throw new RangeError(`maxEvents must be a positive integer, got ${options.maxEvents}`);
    this.#ring = new Array<RawEvent | undefined>(options.maxEvents);
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
    const capacity = this.#ring.length;
    for (let id = from; id <= this.#headId; id++) {
      const event = this.#ring[(this.#start + (id - first)) % capacity];
      if (event !== undefined) visit(event);
    }
  }

  publishBoxLogs(items: readonly BoxLogStreamItem[]): void {
    if (items.length === 0) return;
    this.#afterCommit(() => {
      for (const item of items) this.#push({ kind: 'box_log', item });
    });
  }

  publishBox(moduleId: number): void {
    this.#afterCommit(() => this.#push({ kind: 'box', moduleId }));
  }

  publishSession(sessionId: number): void {
    this.#afterCommit(() => this.#push({ kind: 'session', sessionId }));
  }

  publishForwarding(parkingId: number): void {
    this.#afterCommit(() => this.#push({ kind: 'forwarding', parkingId }));
  }

  publishControl(delivery: ControlDelivery): void {
    this.#afterCommit(() => this.#push({ kind: 'control', delivery }));
  }

  publishConformance(run: ConformanceRunLike): void {
    this.#afterCommit(() => this.#push({ kind: 'conformance', run }));
  }

  #afterCommit(publish: () => void): void {
    if (this.options.afterCommit?.(publish) !== true) publish();
  }

  #push(published: Published): void {
    const capacity = this.#ring.length;
    if (this.#count === capacity) this.#dropOldest();
    const event = { ...published, id: ++this.#headId, at: this.options.clock.now() } as RawEvent;
    this.#ring[(this.#start + this.#count) % capacity] = event;
    this.#count++;
    this.counters.published++;
    if (this.#headId % 256 === 0) this.#expire(); // now and then: the window, not only the cap
  }

  /** Drops events older than the window. */
  #expire(): void {
    const oldest = this.options.clock.now() - this.options.replayMs;
    while (this.#count > 0 && (this.#ring[this.#start]?.at ?? oldest) < oldest) this.#dropOldest();
  }

  #dropOldest(): void {
    this.#ring[this.#start] = undefined;
    this.#start = (this.#start + 1) % this.#ring.length;
    this.#count--;
    this.counters.evicted++;
  }
}
