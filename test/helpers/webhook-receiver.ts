// The receiver's side of Standard Webhooks, done with the `standardwebhooks`
// npm package a third party would use: nothing of ours checks
// our signatures.
import { Webhook } from 'standardwebhooks';
import type { Received } from './receiver.js';

/** A secret as the receiver holds it: `whsec_...`, or raw bytes (an older parkbench's secret). */
export type ReceiverSecret = string | { raw: string };

function headersOf(received: Received): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(received.headers)) if (typeof value === 'string') headers[name] = value;
  return headers;
}

/**
 * `Webhook.verify` as a receiver whose clock reads `nowMs` runs it: the
 * library takes "now" from Date.now() (5 minutes' tolerance), and in these
 * tests both sides live on the injected clock, so Date.now reads `nowMs`
 * for this synchronous call only. Returns the parsed body; throws the
 * library's WebhookVerificationError.
 */
export function verifyAt(secret: ReceiverSecret, received: Received, nowMs: number = received.receivedAt): unknown {
  const webhook = typeof secret === 'string' ? new Webhook(secret) : new Webhook(secret.raw, { format: 'raw' });
  const realNow = Date.now;
  Date.now = () => nowMs;
  try {
    return webhook.verify(received.body, headersOf(received));
  } finally {
    Date.now = realNow;
  }
}

/** Whether the library accepts it (at its arrival time unless told). */
export function verifies(secret: ReceiverSecret, received: Received, nowMs?: number): boolean {
  try {
    verifyAt(secret, received, nowMs);
    return true;
  } catch {
    return false;
  }
}
