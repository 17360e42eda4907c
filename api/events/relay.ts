// The operator's live stream across API processes on one PostgreSQL
// database: each process sends the events it publishes to the others with
// NOTIFY and pushes theirs into its own hub, so a page connected to any
// process sees what every process ingests. (On SQLite there is one API
// process per database file that streams: nothing is relayed.)
//
// Sending: the hub hands each event published here (after its COMMIT) to
// `add`; they gather for RELAY_EVERY_MS (real time) into one
// batch, sent as one statement of pg_notify calls (relay-message.ts), so
// ingestion at any rate costs at most one small statement every
// RELAY_EVERY_MS, not one per event or per commit.
//
// Receiving: one connection of its own LISTENs. A batch from another
// process names its box logs by id: the receiver reads those rows (one
// query) and pushes the stream items; boxes, sessions and forwarding are
// pushed as ids (the stream renders their newest state), control
// deliveries and conformance runs as they came. Batches are taken one at
// a time, in the order they came.
//
// What cannot be relayed is never silently lost: when the listening
// connection drops (it reconnects, waiting RECONNECT_MS and doubling up to
// MAX_RECONNECT_MS on the injected clock), when a batch cannot be sent, or
// when a received batch is malformed or its rows cannot be read, the hub
// marks a gap on the processes that may have missed events: their clients
// get a snapshot, which is read from the database and so shows every
// process's work.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import type { EventHub } from './hub.js';
import {
  BatchAssembler,
  RELAY_CHANNEL,
  batchIsEmpty,
  emptyBatch,
  encodeBatch,
  type RelayBatch,
} from './relay-message.js';
import type { BoxLogStreamItem, ControlDelivery, ConformanceRunLike, RawEvent, RunLike } from './types.js';

/** Events gather this long before they are sent, ms: a batch at most every
 * RELAY_EVERY_MS per process, whatever the rate of ingestion (a stream's
 * client sees them at its next flush, EVENTS_FLUSH_MS, 250 by default). */
export const RELAY_EVERY_MS = 25;
export const RECONNECT_MS = 1_000;
export const MAX_RECONNECT_MS = 30_000;

export interface RelayLogger {
  warn(object: object, message: string): void;
}

export interface EventRelayOptions {
  readonly hub: EventHub;
  /** The pool sending the batches. */
  readonly pool: pg.Pool;
  /** A new connection for LISTEN (the pool's settings, outside the pool),
   * named `application_name` in pg_stat_activity. */
  readonly connect: (applicationName: string) => pg.Client;
  /** The stream items of the box logs with these ids, in the order asked, those that exist. */
  readonly readBoxLogs: (ids: readonly number[]) => Promise<BoxLogStreamItem[]>;
  readonly clock: Clock;
  readonly log: RelayLogger;
}

export class EventRelay {
  /** This process on the channel: its own batches come back to it and are skipped. */
  readonly origin = randomBytes(8).toString('hex');
  #outgoing: RelayBatch = emptyBatch();
  /** The next send, RELAY_EVERY_MS after the first event it carries. */
  #nextSend: NodeJS.Timeout | undefined;
  /** The batch being sent. */
  #sending: Promise<void> | undefined;
  #batchNumber = 0;
  readonly #assembler = new BatchAssembler();
  /** Received batches, taken one at a time in order. */
  #receiving: Promise<void> = Promise.resolve();
  #listener: pg.Client | undefined;
  #connecting: pg.Client | undefined;
  #reconnect: TimerHandle | undefined;
  #reconnectMs = RECONNECT_MS;
  #closed = false;

  constructor(private readonly options: EventRelayOptions) {}

  /** Connects the listener; resolves once it listens (or its first attempt failed: it keeps trying). */
  async start(): Promise<void> {
    await this.#listen();
  }

  /** Stops listening; a batch being sent or received is let finish. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#reconnect !== undefined) this.options.clock.clearTimeout(this.#reconnect);
    const listener = this.#listener;
    this.#listener = undefined;
    for (const client of [listener, this.#connecting]) await client?.end().catch(() => undefined);
    // What gathered goes now, once the batch in flight is sent.
    clearTimeout(this.#nextSend);
    this.#nextSend = undefined;
    await this.#sending;
    await Promise.all([this.#receiving, this.#send()]);
  }

  /** An event published in this process (the hub's onLocal). */
  add(kind: RawEvent['kind'], payload: unknown): void {
    if (this.#closed) return;
    const batch = this.#outgoing;
    switch (kind) {
      case 'box_log':
        batch.box_logs.push((payload as BoxLogStreamItem).id);
        break;
      case 'box':
        batch.boxes.push(payload as number);
        break;
      case 'session':
        batch.sessions.push(payload as number);
        break;
      case 'forwarding':
        batch.forwarding.push(payload as number);
        break;
      case 'control':
        batch.control.push(payload as ControlDelivery);
        break;
      case 'conformance':
        batch.conformance.push(payload as ConformanceRunLike);
        break;
      case 'run':
        batch.runs.push(payload as RunLike);
        break;
    }
    this.#scheduleSend();
  }

  #scheduleSend(): void {
    if (this.#nextSend !== undefined || this.#sending !== undefined || this.#closed) return;
    // A real-time timer, not the injected clock's: it only groups what this
    // process sends (no behaviour waits on it), and a test stepping its
    // clock sees only the timers of what it tests.
    this.#nextSend = setTimeout(() => {
      this.#nextSend = undefined;
      this.#sending = this.#send().finally(() => {
        this.#sending = undefined;
        if (!batchIsEmpty(this.#outgoing)) this.#scheduleSend();
      });
    }, RELAY_EVERY_MS);
    this.#nextSend.unref();
  }

  /** Sends what gathered, as one batch (one statement). */
  async #send(): Promise<void> {
    if (batchIsEmpty(this.#outgoing)) return;
    const batch = this.#outgoing;
    this.#outgoing = emptyBatch();
    const payloads = encodeBatch(this.origin, ++this.#batchNumber, batch);
    try {
      await this.options.pool.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [
        RELAY_CHANNEL,
        payloads,
      ]);
    } catch (error) {
      // The other processes miss these events; their clients' snapshots
      // (read from the database) will not, so they are told to take one.
      this.options.log.warn({ err: error }, 'could not relay events to the other API processes');
      await this.#tellGap();
    }
  }

  /** An empty batch asks every receiver for a gap (a snapshot for its clients). */
  async #tellGap(): Promise<void> {
    await this.options.pool
      .query('SELECT pg_notify($1, $2)', [RELAY_CHANNEL, `${this.origin} 0 1/1 gap`])
      .catch(() => undefined);
  }

  async #listen(): Promise<void> {
    if (this.#closed) return;
    const client = this.options.connect(`parkbench events ${this.origin}`);
    const lost = (error?: Error): void => {
      if (this.#listener !== client) return;
      this.#listener = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      this.options.log.warn({ err: error }, 'lost the connection receiving the other API processes’ events');
      this.options.hub.markGap();
      this.#scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === RELAY_CHANNEL && message.payload !== undefined) this.#received(message.payload);
    });
    // close() ends it while it connects; then it fails here, or ends at once.
    this.#connecting = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${RELAY_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      this.options.log.warn({ err: error }, 'could not listen for the other API processes’ events');
      this.#scheduleReconnect();
      return;
    } finally {
      this.#connecting = undefined;
    }
    this.#listener = client;
    this.#reconnectMs = RECONNECT_MS;
    // What the others published before this connection listened is not here.
    this.options.hub.markGap();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnect !== undefined) return;
    const waitMs = this.#reconnectMs;
    this.#reconnectMs = Math.min(MAX_RECONNECT_MS, this.#reconnectMs * 2);
    this.#reconnect = this.options.clock.setTimeout(() => {
      this.#reconnect = undefined;
      void this.#listen();
    }, waitMs);
  }

  #received(payload: string): void {
    if (payload.startsWith(`${this.origin} `)) return;
    if (payload.endsWith(' 1/1 gap')) {
      this.#receiving = this.#receiving.then(() => this.options.hub.markGap());
      return;
    }
    const assembled = this.#assembler.accept(payload);
    if (assembled.kind === 'partial') return;
    if (assembled.kind === 'invalid') {
      this.options.log.warn({ reason: assembled.reason }, 'an event batch from another API process was not understood');
      this.#receiving = this.#receiving.then(() => this.options.hub.markGap());
      return;
    }
    const { batch } = assembled;
    this.#receiving = this.#receiving.then(() => this.#push(batch));
  }

  async #push(batch: RelayBatch): Promise<void> {
    const { hub } = this.options;
    let items: BoxLogStreamItem[] = [];
    if (batch.box_logs.length > 0) {
      try {
        items = await this.options.readBoxLogs(batch.box_logs);
      } catch (error) {
        this.options.log.warn({ err: error }, 'could not read the box logs another API process stored');
        hub.markGap();
        return;
      }
    }
    hub.receive('box_log', items);
    hub.receive('box', batch.boxes);
    hub.receive('session', batch.sessions);
    hub.receive('forwarding', batch.forwarding);
    hub.receive('control', batch.control);
    hub.receive('conformance', batch.conformance);
    hub.receive('run', batch.runs);
  }
}
