// The commands a gateway took and has not answered yet, kept where its
// responses wait (gateway/disk-queue.ts): a command is written there before
// it goes on a box's link, and leaves in the same write as its response
// record. A gateway killed in between finds it at its next start: a late
// answer is matched to it and published, and a command no answer comes for
// gets its timeout record instead of silence.
import type { CommandContext, Via } from '../lib/mqtt-messages.js';
import { MemoryPublishQueue, type PublishQueue } from '../lib/resilient-mqtt.js';

/** A command the gateway took for a box, as kept in the journal. */
export interface TakenCommand {
  readonly module_id: number;
  readonly via: Exclude<Via, 'mqtt'>;
  /** Base64 of the command frame. */
  readonly command: string;
  readonly context: CommandContext;
}

export interface CommandJournal {
  /** Keeps a command; `durable` settles once it is on disk (or its write
   * failed): it goes on a link only then. */
  take(command: TakenCommand): { id: number; durable: Promise<void> };
  /** The command is answered (its record queued in the same turn): it leaves. */
  settle(id: number): void;
  /** Commands a previous run took and never settled, oldest first. */
  recovered(): readonly { id: number; command: TakenCommand }[];
}

/** Where a gateway's responses wait and its commands are kept. */
export type GatewayQueue = PublishQueue & CommandJournal;

/** Everything in memory: nothing survives the process, nothing is recovered. */
export class MemoryGatewayQueue extends MemoryPublishQueue implements CommandJournal {
  #nextCommandId = 1;

  take(): { id: number; durable: Promise<void> } {
    return { id: this.#nextCommandId++, durable: Promise.resolve() };
  }

  settle(): void {}

  recovered(): readonly { id: number; command: TakenCommand }[] {
    return [];
  }
}

export function isTakenCommand(value: unknown): value is TakenCommand {
  const item = value as Partial<Record<keyof TakenCommand, unknown>> | null;
  return (
    typeof item === 'object' &&
    item !== null &&
    Number.isInteger(item.module_id) &&
    (item.via === 'serial' || item.via === 'ble') &&
    typeof item.command === 'string' &&
    typeof item.context === 'object' &&
    item.context !== null
  );
}
