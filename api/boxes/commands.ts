// Sending a command to a box and waiting for its answer: what the control
// dispatcher, the open route and the operator's box commands are handed.
// The MQTT service (api/mqtt/mqtt-service.ts) is the one that exists; each
// user declares here what it reads of the answer, not how it travels.
import type { CommandContext } from '../../lib/mqtt-messages.js';

/** The box's answer: its response frame (base64), or why there is none, and
 * the box log its ingestion stored. */
export interface CommandAnswer {
  readonly response: string | null;
  /** Why there is no response (the gateway's words), when there is none. */
  readonly error: string | undefined;
  /** The stored log of the answer: whether it verified under the box key. */
  readonly log: { readonly id: number; readonly verified: boolean } | undefined;
}

export type CommandOutcome =
  { readonly answered: CommandAnswer } | { readonly error: 'timeout' | 'broker_unavailable' };

export interface BoxCommandSender {
  /** Publishes `command` to the box and waits for its answer, at most `timeoutMs`. */
  sendCommand(
    moduleId: number,
    command: Buffer,
    context: Omit<CommandContext, 'request_id'>,
    timeoutMs: number,
  ): Promise<CommandOutcome>;
}
