// A bounded publish queue kept on disk: responses the gateway produced survive
// a restart (or a SIGKILL) of the gateway until the broker's PUBACK, whether
// the broker was away or took them without acknowledging yet (issue 12). The
// file is replaced atomically (lib/atomic-file.ts), so it always holds a whole
// queue; changes that come while a write runs share the next write.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../lib/atomic-file.js';
import type { PublishQueue, QueuedEntry, QueuedPublish } from '../lib/resilient-mqtt.js';
import { messageOf } from '../lib/message-of.js';

export class DiskPublishQueue implements PublishQueue {
  #entries: QueuedEntry[] = [];
  #nextId = 1;
  #writing: Promise<void> = Promise.resolve();
  /** A write is chained and has not started yet: later changes ride on it. */
  #writePending = false;
  /** Items dropped because the queue was full. */
  overflows = 0;
  /** Writes of the file that failed (the queue is still whole in memory). */
  writeErrors = 0;
  /** Writes of the file done (one per batch of changes). */
  writes = 0;
  lastWriteError: string | undefined;

  private constructor(
    readonly path: string,
    private readonly limit: number,
  ) {}

  /** Opens the queue, picking up what a previous run left in it. */
  static async open(path: string, limit = 10_000): Promise<DiskPublishQueue> {
    const queue = new DiskPublishQueue(path, limit);
    // Every response is written here: a missing folder would fail each write.
    await mkdir(dirname(path), { recursive: true });
    try {
      const items = JSON.parse(await readFile(path, 'utf8')) as unknown;
      if (Array.isArray(items))
        queue.#entries = items
          .filter(isQueuedPublish)
          .slice(-limit)
          .map((item) => ({ id: queue.#nextId++, item }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`${path}: not a publish queue (${messageOf(error)})`, { cause: error });
    }
    return queue;
  }

  get size(): number {
    return this.#entries.length;
  }

  push(item: QueuedPublish): { id: number; dropped: boolean } {
    const id = this.#nextId++;
    this.#entries.push({ id, item });
    const dropped = this.#entries.length > this.limit;
    if (dropped) {
      this.#entries.shift();
      this.overflows++;
    }
    this.#persist();
    return { id, dropped };
  }

  entries(): readonly QueuedEntry[] {
    return [...this.#entries];
  }

  remove(id: number): void {
    const index = this.#entries.findIndex((entry) => entry.id === id);
    if (index < 0) return;
    this.#entries.splice(index, 1);
    this.#persist();
  }

  /** Resolves once the file holds the queue as it is now. */
  flushed(): Promise<void> {
    return this.#writing;
  }

  #persist(): void {
    if (this.#writePending) return;
    this.#writePending = true;
    this.#writing = this.#writing
      .then(() => {
        // The queue as it is when the write starts: every change before now is in it.
        this.#writePending = false;
        this.writes++;
        return writeFileAtomic(this.path, JSON.stringify(this.#entries.map((entry) => entry.item)));
      })
      .catch((error: unknown) => {
        this.writeErrors++;
        this.lastWriteError = messageOf(error);
      });
  }
}

function isQueuedPublish(value: unknown): value is QueuedPublish {
  const item = value as Partial<QueuedPublish> | null;
  return (
    typeof item === 'object' &&
    item !== null &&
    typeof item.topic === 'string' &&
    typeof item.payload === 'string' &&
    (item.qos === 0 || item.qos === 1) &&
    typeof item.retain === 'boolean'
  );
}
