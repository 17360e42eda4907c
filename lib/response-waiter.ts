// Matches a box's responses to the commands sent to it, each with
// a timeout. A response answers the oldest pending command with
// the same kind and key_id, which a box echoes whenever it could parse the
// header (docs/protocol.md, steps 1 and 2, and the paragraph after step 11); a command it could not parse is answered
// with kind 0 and key_id 0.
import type { Clock, TimerHandle } from './clock.js';
import {
  parseCommandHeader,
  parseResponse,
  REMAINING_NOT_APPLICABLE,
  Status,
  type ResponseFields,
} from '../firmware-protocol/index.js';

export interface Echo {
  readonly kind: number;
  readonly keyId: number;
}

/** The kind and key_id a box will echo for `command`. */
export function expectedEcho(command: Uint8Array): Echo {
  const parsed = parseCommandHeader(command);
  return parsed.ok ? { kind: parsed.header.kind, keyId: parsed.header.keyId } : { kind: 0, keyId: 0 };
}

/** A status report: status OK with kind 0, key_id 0 and remaining 0xFF
 * (docs/protocol.md, Serial link framing, type 0x82). No command is answered so. */
export function isStatusReport(fields: ResponseFields): boolean {
  return (
    fields.status === Status.OK &&
    fields.kind === 0 &&
    fields.keyId === 0 &&
    fields.remaining === REMAINING_NOT_APPLICABLE
  );
}

export type WaitOutcome = { readonly response: Buffer } | { readonly error: 'timeout' | 'link_down' };

interface Pending {
  readonly echo: Echo;
  readonly resolve: (outcome: WaitOutcome) => void;
  readonly timer: TimerHandle;
}

export class ResponseWaiter {
  readonly #pending: Pending[] = [];

  constructor(private readonly clock: Clock) {}

  get pending(): number {
    return this.#pending.length;
  }

  /** Waits for the response to `command`: its bytes, or why none came. */
  expect(command: Uint8Array, timeoutMs: number): Promise<WaitOutcome> {
    return new Promise((resolve) => {
      const entry: Pending = {
        echo: expectedEcho(command),
        resolve,
        timer: this.clock.setTimeout(() => this.#settle(entry, { error: 'timeout' }), timeoutMs),
      };
      this.#pending.push(entry);
    });
  }

  /** Hands over a response frame; true if it answered a pending command. */
  offer(response: Buffer): boolean {
    let fields: ResponseFields;
    try {
      fields = parseResponse(response);
    } catch {
      return false;
    }
    const entry = this.#pending.find(
      (pending) => pending.echo.kind === fields.kind && pending.echo.keyId === fields.keyId,
    );
    if (entry === undefined) return false;
    this.#settle(entry, { response });
    return true;
  }

  /** The link went down: nothing pending will be answered. */
  failAll(): void {
    for (const entry of [...this.#pending]) this.#settle(entry, { error: 'link_down' });
  }

  #settle(entry: Pending, outcome: WaitOutcome): void {
    const index = this.#pending.indexOf(entry);
    if (index === -1) return;
    this.#pending.splice(index, 1);
    this.clock.clearTimeout(entry.timer);
    entry.resolve(outcome);
  }
}
