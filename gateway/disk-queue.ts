// A bounded publish queue kept on disk, with the gateway's command journal
// (gateway/command-journal.ts) in the same file: responses the gateway
// produced survive a restart (or a SIGKILL) of the gateway until the
// broker's PUBACK, whether the broker was away or took them without
// acknowledging yet, and so do the commands it took and has not answered.
//
// The file is a log, one JSON line a change (a response queued or removed, a
// command taken or settled) after a header line; the queue is what the
// lines add up to. Nothing leaves the queue before it is on disk: an entry
// is handed out for publishing, and a command goes on a link, only once the
// append holding it is flushed (fdatasync), so no one saw what a crash could
// make the gateway forget. Changes that come while a write runs share the
// next append (a group commit): responses and commands that arrive together
// cost one flush. A removal (a PUBACK) needs no flush of its own: forgotten
// by a crash, it costs a duplicate, which ingestion drops. It rides on the
// next append, or is written REMOVAL_WRITE_DELAY_MS later when nothing else
// comes, never ahead of the next command or response, which would wait for
// it. A crash in the middle of an append leaves a torn last line, which
// opening skips; opening then writes the queue afresh (lib/atomic-file.ts:
// a whole new file renamed over the old one), as does a write once the log
// has grown to many times the queue.
//
// A write that fails (a full disk) is counted, and what it held is handed
// out all the same: held back it would be no safer from a crash, only
// undelivered; the next write rewrites the whole queue.
import { mkdir, open as openFile, readFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../lib/atomic-file.js';
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import type { QueuedEntry, QueuedPublish } from '../lib/resilient-mqtt.js';
import { messageOf } from '../lib/message-of.js';
import { isTakenCommand, type GatewayQueue, type TakenCommand } from './command-journal.js';

/** How long removals wait for a write to ride on before they get their own, ms. */
export const REMOVAL_WRITE_DELAY_MS = 100;
/** The log is written afresh once it has this many lines more than the queue has entries and commands. */
const REWRITE_AFTER_LINES = 10_000;

const HEADER = JSON.stringify({ parkbench_gateway_queue: 1 });

type Change =
  | { readonly op: 'push'; readonly id: number; readonly item: QueuedPublish }
  | { readonly op: 'remove'; readonly id: number }
  | { readonly op: 'take'; readonly id: number; readonly command: TakenCommand }
  | { readonly op: 'settle'; readonly id: number };

interface Entry extends QueuedEntry {
  /** The write holding it settled: it may be published. */
  written: boolean;
}

interface KeptCommand {
  readonly id: number;
  readonly command: TakenCommand;
}

/** What a queue file holds: the responses waiting and the commands unanswered, oldest first. */
export interface QueueContent {
  readonly publishes: readonly QueuedPublish[];
  readonly commands: readonly TakenCommand[];
}

export class DiskPublishQueue implements GatewayQueue {
  #entries: Entry[] = [];
  #commands: KeptCommand[] = [];
  /** Ids of the commands found in the file at open. */
  #recoveredIds = new Set<number>();
  #nextId = 1;
  /** The log, open for appending. */
  #file: FileHandle | undefined;
  /** Lines in the log, the header left out. */
  #lines = 0;
  /** Changes not written yet. */
  #changes: Change[] = [];
  /** A write failed: the next one writes the whole queue afresh. */
  #rewrite = false;
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

  /** Opens the queue, picking up what a previous run left in it, and writes it afresh. */
  static async open(
    path: string,
    limit = 10_000,
    { clock = systemClock }: { clock?: Clock } = {},
  ): Promise<DiskPublishQueue> {
    const queue = new DiskPublishQueue(path, limit, clock);
    // Every response is written here: a missing folder would fail each write.
    await mkdir(dirname(path), { recursive: true });
    const content = await readQueueFile(path);
    queue.#entries = content.publishes.slice(-limit).map((item) => ({ id: queue.#nextId++, item, written: true }));
    queue.#commands = content.commands.map((command) => ({ id: queue.#nextId++, command }));
    queue.#recoveredIds = new Set(queue.#commands.map((kept) => kept.id));
    await queue.#writeAfresh();
    return queue;
  }

  get size(): number {
    return this.#entries.length;
  }

  push(item: QueuedPublish): { id: number; dropped: boolean; durable: Promise<void> } {
    const id = this.#nextId++;
    this.#entries.push({ id, item, written: false });
    this.#changes.push({ op: 'push', id, item });
    const dropped = this.#entries.length > this.limit;
    if (dropped) {
      const oldest = this.#entries.shift();
      if (oldest !== undefined) this.#changes.push({ op: 'remove', id: oldest.id });
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
    this.#changes.push({ op: 'remove', id });
    this.#persistLater();
  }

  take(command: TakenCommand): { id: number; durable: Promise<void> } {
    const id = this.#nextId++;
    this.#commands.push({ id, command });
    this.#changes.push({ op: 'take', id, command });
    return { id, durable: this.#persist() };
  }

  settle(id: number): void {
    const index = this.#commands.findIndex((kept) => kept.id === id);
    if (index < 0) return;
    this.#commands.splice(index, 1);
    this.#recoveredIds.delete(id);
    this.#changes.push({ op: 'settle', id });
    void this.#persist();
  }

  recovered(): readonly KeptCommand[] {
    return this.#commands.filter((kept) => this.#recoveredIds.has(kept.id));
  }

  /** Resolves once the file holds the queue as it is now. */
  flushed(): Promise<void> {
    return this.#removalTimer === undefined ? this.#writing : this.#persist();
  }

  /** Writes what is pending and closes the file. */
  async close(): Promise<void> {
    await this.flushed();
    await this.#file?.close();
    this.#file = undefined;
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
      // The changes made when the write starts: every change before now is in it.
      this.#nextWrite = undefined;
      const changes = this.#changes;
      this.#changes = [];
      const entries = [...this.#entries];
      this.writes++;
      try {
        const live = this.#entries.length + this.#commands.length;
        if (this.#rewrite || this.#file === undefined || this.#lines + changes.length > live + REWRITE_AFTER_LINES)
          await this.#writeAfresh();
        else await this.#append(changes);
      } catch (error) {
        this.writeErrors++;
        this.lastWriteError = messageOf(error);
        this.#rewrite = true;
      }
      for (const entry of entries) entry.written = true;
    });
    this.#nextWrite = write;
    this.#writing = write;
    return write;
  }

  async #append(changes: readonly Change[]): Promise<void> {
    const file = this.#file;
    if (file === undefined || changes.length === 0) return;
    await file.appendFile(changes.map((change) => `${JSON.stringify(change)}\n`).join(''));
    await file.datasync();
    this.#lines += changes.length;
  }

  /** The whole queue as a new log, renamed over the old one; appends go there from now on. */
  async #writeAfresh(): Promise<void> {
    const changes: Change[] = [
      ...this.#entries.map((entry): Change => ({ op: 'push', id: entry.id, item: entry.item })),
      ...this.#commands.map((kept): Change => ({ op: 'take', id: kept.id, command: kept.command })),
    ];
    await writeFileAtomic(this.path, [HEADER, ...changes.map((change) => JSON.stringify(change))].join('\n') + '\n');
    await this.#file?.close();
    this.#file = await openFile(this.path, 'a');
    this.#lines = changes.length;
    this.#rewrite = false;
  }
}

/** What a queue file holds (nothing, when there is no file); throws if it is no queue file. */
export async function readQueueFile(path: string): Promise<QueueContent> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { publishes: [], commands: [] };
    throw error;
  }
  try {
    return parseQueueFile(text);
  } catch (error) {
    throw new Error(`${path}: not a publish queue (${messageOf(error)})`, { cause: error });
  }
}

function parseQueueFile(text: string): QueueContent {
  // An older gateway's file: the queue as one JSON array of publishes.
  if (text.trimStart().startsWith('['))
    return { publishes: (JSON.parse(text) as unknown[]).filter(isQueuedPublish), commands: [] };
  const lines = text.split('\n');
  if (lines[0] !== HEADER) throw new Error(`its first line is not ${HEADER}`);
  const publishes = new Map<number, QueuedPublish>();
  const commands = new Map<number, TakenCommand>();
  for (const [index, line] of lines.entries()) {
    if (index === 0 || line === '') continue;
    let change: Partial<Change>;
    try {
      change = JSON.parse(line) as Partial<Change>;
    } catch (error) {
      // A crash in the middle of an append tears the last line only.
      if (index === lines.length - 1) break;
      throw new Error(`line ${index + 1}: ${messageOf(error)}`, { cause: error });
    }
    if (typeof change.id !== 'number') continue;
    if (change.op === 'push' && isQueuedPublish(change.item)) publishes.set(change.id, change.item);
    else if (change.op === 'remove') publishes.delete(change.id);
    else if (change.op === 'take' && isTakenCommand(change.command)) commands.set(change.id, change.command);
    else if (change.op === 'settle') commands.delete(change.id);
  }
  return { publishes: [...publishes.values()], commands: [...commands.values()] };
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
