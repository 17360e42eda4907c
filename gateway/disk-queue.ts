// A bounded publish queue kept on disk, with the gateway's command journal
// (gateway/command-journal.ts) in the same file: responses the gateway
// produced survive a restart (or a SIGKILL) of the gateway until the
// broker's PUBACK, whether the broker was away or took them without
// acknowledging yet, and so do the commands it took and has not answered.
//
// Nothing leaves the queue before it is on disk: an entry is handed out for
// publishing, and a command goes on a link, only once the write holding it
// has flushed the file (lib/atomic-file.ts: written, fsync'd, renamed over
// the old one, the folder fsync'd), so the file always holds a whole queue
// and no one saw what a crash could make the gateway forget. Changes that
// come while a write runs share the next write (a group commit): responses
// and commands that arrive together cost one flush. A removal (a PUBACK)
// needs no flush of its own: forgotten by a crash, it costs a duplicate,
// which ingestion drops. It rides on the next write, or is written
// REMOVAL_WRITE_DELAY_MS later when nothing else comes: never ahead of the
// next command or response, which would wait for it.
//
// A write that fails (a full disk) is counted, and what it held is handed
// out all the same: held back it would be no safer from a crash, only
// undelivered; the next change writes the whole queue again.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../lib/atomic-file.js';
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import type { QueuedEntry, QueuedPublish } from '../lib/resilient-mqtt.js';
import { messageOf } from '../lib/message-of.js';
import { isTakenCommand, type GatewayQueue, type TakenCommand } from './command-journal.js';

/** How long removals wait for a write to ride on before they get their own, ms. */
export const REMOVAL_WRITE_DELAY_MS = 100;

interface Entry extends QueuedEntry {
  /** The write holding it settled: it may be published. */
  written: boolean;
}

interface KeptCommand {
  readonly id: number;
  readonly command: TakenCommand;
}

/** The file: `{"publishes": [...], "commands": [...]}` (a bare array of
 * publishes, as older gateways wrote it, is read too). */
interface QueueFile {
  readonly publishes: readonly QueuedPublish[];
  readonly commands: readonly TakenCommand[];
}

export class DiskPublishQueue implements GatewayQueue {
  #entries: Entry[] = [];
  #commands: KeptCommand[] = [];
  /** Ids of the commands found in the file at open. */
  #recoveredIds = new Set<number>();
  #nextId = 1;
  #writing: Promise<void> = Promise.resolve();
  /** A write chained and not started yet: changes made now ride on it. */
  #nextWrite: Promise<void> | undefined;
  /** Removals wait for a write to ride on until this fires. */
  #removalTimer: TimerHandle | undefined;
  /** Items dropped because the queue was full. */
  overflows = 0;
  /** Writes of the file that failed. */
  writeErrors = 0;
  /** Writes of the file done (one per batch of changes). */
  writes = 0;
  lastWriteError: string | undefined;

  private constructor(
    readonly path: string,
    private readonly limit: number,
    private readonly clock: Clock,
  ) {}

  /** Opens the queue, picking up what a previous run left in it. */
  static async open(
    path: string,
    limit = 10_000,
    { clock = systemClock }: { clock?: Clock } = {},
  ): Promise<DiskPublishQueue> {
    const queue = new DiskPublishQueue(path, limit, clock);
    // Every response is written here: a missing folder would fail each write.
    await mkdir(dirname(path), { recursive: true });
    let file: QueueFile | undefined;
    try {
      file = parseQueueFile(JSON.parse(await readFile(path, 'utf8')) as unknown);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`${path}: not a publish queue (${messageOf(error)})`, { cause: error });
    }
    if (file === undefined) return queue;
    queue.#entries = file.publishes.slice(-limit).map((item) => ({ id: queue.#nextId++, item, written: true }));
    queue.#commands = file.commands.map((command) => ({ id: queue.#nextId++, command }));
    queue.#recoveredIds = new Set(queue.#commands.map((kept) => kept.id));
    return queue;
  }

  get size(): number {
    return this.#entries.length;
  }

  push(item: QueuedPublish): { id: number; dropped: boolean; durable: Promise<void> } {
    const id = this.#nextId++;
    this.#entries.push({ id, item, written: false });
    const dropped = this.#entries.length > this.limit;
    if (dropped) {
      this.#entries.shift();
      this.overflows++;
    }
    return { id, dropped, durable: this.#persist() };
  }

  entries(): readonly QueuedEntry[] {
    return this.#entries.filter((entry) => entry.written).map(({ id, item }) => ({ id, item }));
  }

  remove(id: number): void {
    const index = this.#entries.findIndex((entry) => entry.id === id);
    if (index < 0) return;
    this.#entries.splice(index, 1);
    this.#persistLater();
  }

  take(command: TakenCommand): { id: number; durable: Promise<void> } {
    const id = this.#nextId++;
    this.#commands.push({ id, command });
    return { id, durable: this.#persist() };
  }

  settle(id: number): void {
    const index = this.#commands.findIndex((kept) => kept.id === id);
    if (index < 0) return;
    this.#commands.splice(index, 1);
    this.#recoveredIds.delete(id);
    void this.#persist();
  }

  recovered(): readonly KeptCommand[] {
    return this.#commands.filter((kept) => this.#recoveredIds.has(kept.id));
  }

  /** Commands kept and not settled (a previous run's included). */
  get commands(): number {
    return this.#commands.length;
  }

  /** Resolves once the file holds the queue as it is now. */
  flushed(): Promise<void> {
    return this.#removalTimer === undefined ? this.#writing : this.#persist();
  }

  /** A removal: on the next write, or on one of its own soon. */
  #persistLater(): void {
    if (this.#nextWrite !== undefined || this.#removalTimer !== undefined) return;
    this.#removalTimer = this.clock.setTimeout(() => {
      this.#removalTimer = undefined;
      void this.#persist();
    }, REMOVAL_WRITE_DELAY_MS);
  }

  /** The write that will hold every change made so far. */
  #persist(): Promise<void> {
    if (this.#removalTimer !== undefined) {
      this.clock.clearTimeout(this.#removalTimer);
      this.#removalTimer = undefined;
    }
    if (this.#nextWrite !== undefined) return this.#nextWrite;
    const write = this.#writing.then(async () => {
      // The queue as it is when the write starts: every change before now is in it.
      this.#nextWrite = undefined;
      const entries = [...this.#entries];
      const file: QueueFile = {
        publishes: entries.map((entry) => entry.item),
        commands: this.#commands.map((kept) => kept.command),
      };
      this.writes++;
      try {
        await writeFileAtomic(this.path, JSON.stringify(file));
      } catch (error) {
        this.writeErrors++;
        this.lastWriteError = messageOf(error);
      }
      for (const entry of entries) entry.written = true;
    });
    this.#nextWrite = write;
    this.#writing = write;
    return write;
  }
}

function parseQueueFile(value: unknown): QueueFile {
  if (Array.isArray(value)) return { publishes: value.filter(isQueuedPublish), commands: [] };
  const file = value as Partial<Record<keyof QueueFile, unknown>> | null;
  if (typeof file !== 'object' || file === null || !Array.isArray(file.publishes) || !Array.isArray(file.commands))
    throw new Error('neither {"publishes": [...], "commands": [...]} nor an array');
  return {
    publishes: (file.publishes as unknown[]).filter(isQueuedPublish),
    commands: (file.commands as unknown[]).filter(isTakenCommand),
  };
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
