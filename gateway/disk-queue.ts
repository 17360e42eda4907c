// A bounded publish queue kept on disk: responses the gateway produced while
// the broker was away survive a restart of the gateway too. The file is
// replaced atomically after each change, so it always holds a whole queue.
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../lib/atomic-file.js';
import type { PublishQueue, QueuedPublish } from '../lib/resilient-mqtt.js';

export class DiskPublishQueue implements PublishQueue {
  #items: QueuedPublish[] = [];
  #writing: Promise<void> = Promise.resolve();
  /** Items dropped because the queue was full. */
  overflows = 0;
  /** Writes of the file that failed (the queue is still whole in memory). */
  writeErrors = 0;
  lastWriteError: string | undefined;

  private constructor(
    readonly path: string,
    private readonly limit: number,
  ) {}

  /** Opens the queue, picking up what a previous run left in it. */
  static async open(path: string, limit = 10_000): Promise<DiskPublishQueue> {
    const queue = new DiskPublishQueue(path, limit);
    try {
      const items = JSON.parse(await readFile(path, 'utf8')) as unknown;
      if (Array.isArray(items)) queue.#items = items.filter(isQueuedPublish).slice(-limit);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${path}: not a publish queue (${(error as Error).message})`, { cause: error });
    }
    return queue;
  }

  get size(): number {
    return this.#items.length;
  }

  push(item: QueuedPublish): boolean {
    this.#items.push(item);
    const kept = this.#items.length <= this.limit;
    if (!kept) {
      this.#items.shift();
      this.overflows++;
    }
    this.#persist();
    return kept;
  }

  drain(): QueuedPublish[] {
    const items = this.#items;
    this.#items = [];
    if (items.length > 0) this.#persist();
    return items;
  }

  /** Resolves once the file holds the queue as it is now. */
  flushed(): Promise<void> {
    return this.#writing;
  }

  #persist(): void {
    const text = JSON.stringify(this.#items);
    this.#writing = this.#writing
      .then(() => writeFileAtomic(this.path, text))
      .catch((error: unknown) => {
        this.writeErrors++;
        this.lastWriteError = (error as Error).message;
      });
  }
}

function isQueuedPublish(value: unknown): value is QueuedPublish {
  const item = value as Partial<QueuedPublish> | null;
  return typeof item === 'object' && item !== null && typeof item.topic === 'string' && typeof item.payload === 'string' && (item.qos === 0 || item.qos === 1) && typeof item.retain === 'boolean';
}
