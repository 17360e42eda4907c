// Batches the embedded broker's ingestion (issue 7, speed): response messages
// that arrive in the same turn of the event loop (aedes hands over every
// packet read from every socket in that turn) become box logs in ONE
// ingestBoxLogs call, one transaction, instead of one each. The per-message
// transaction (its commit and setup), not the box-log work, held ingestion
// near 5,000 logs/s.
//
// What does not change:
// - Delivery: each message's promise resolves (and the broker sends its
//   PUBACK) only after the transaction holding its box log has committed.
// - Isolation: if the batch is refused or fails as a whole (nothing of it is
//   written), every message is ingested again alone (ResponseIngestion.
//   ingestMany), so a bad message is counted and its neighbours are stored.
// - A busy database (another process holding the write lock past
//   busy_timeout) acknowledges nothing: the messages it put off wait
//   BUSY_RETRY_MS on the injected clock, then join the next batch.
// No timer: a lone message is flushed on the next turn of the loop, so a
// quiet bench sees no added latency, and a busy one gets large batches.
import { systemClock, type Clock } from '../../lib/clock.js';
import { BUSY_RETRY_MS, type ResponseIngestion, type ResponseMessage } from './response-ingester.js';

interface Pending extends ResponseMessage {
  readonly done: () => void;
}

export interface IngestBatcherCounters {
  batches: number;
  messages: number;
}

/** More waiting messages than this are flushed at once, without waiting for the turn to end. */
export const DEFAULT_MAX_BATCH = 500;

export class IngestBatcher {
  readonly counters: IngestBatcherCounters = { batches: 0, messages: 0 };
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(
    private readonly ingestion: ResponseIngestion,
    private readonly clock: Clock = systemClock,
    private readonly maxBatch = DEFAULT_MAX_BATCH,
  ) {}

  /** Resolves once the message's box log is committed (or refused for good). Never rejects. */
  ingest(moduleId: number, payload: Buffer): Promise<void> {
    return new Promise((done) => {
      this.#enqueue({ moduleId, payload, done });
    });
  }

  #enqueue(message: Pending): void {
    this.#pending.push(message);
    if (this.#pending.length >= this.maxBatch) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Stores what is waiting now (also called before the database closes). */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    this.counters.batches++;
    this.counters.messages += batch.length;
    // Synchronous and never throws: when it returns, every log is committed
    // but for those a busy database put off.
    const putOff = new Set(this.ingestion.ingestMany(batch));
    for (const message of batch) if (!putOff.has(message)) message.done();
    if (putOff.size > 0) {
      this.clock.setTimeout(() => {
        for (const message of putOff) this.#enqueue(message);
      }, BUSY_RETRY_MS);
    }
  }
}
