// The forwarding worker (spec 6): groups waiting outbox
// rows into deliveries and POSTs each as a JSON array of spec 2.2 records,
// signed as Standard Webhooks 1.0 says (webhook-id, webhook-timestamp,
// webhook-signature). Only a 2xx delivers (a 3xx is a failure, not
// followed); a failure is retried on the specification's schedule with
// jitter (retry-schedule.ts), later if a 429 or 503 says Retry-After, then
// the delivery is dead; a 410 Gone disables the URL until the operator
// revives it. At least once: a delivery is marked delivered only after the
// 2xx, so a crash in between sends it again, with the same id and records.
// Timers and timeouts run on the injected clock. Several workers (API
// processes) may share one outbox: each delivery is sent under a lease of
// the outbox's (outbox.ts), and an attempt whose lease ran out and was
// taken over records nothing.
import type { Clock, TimerHandle } from '../../lib/clock.js';
import type { DeliveryRow, Lease, OutboxRepository, SigningSecrets } from './outbox.js';
import { postOnce } from './post.js';
import { forwardRecord } from './record.js';
import { retryAfterMs, retryDelay } from './retry-schedule.js';
import { webhookSignature } from './signature.js';
import { FailureLines } from './failure-lines.js';
import type { EventPublisher } from '../events/types.js';

export { forwardRecord } from './record.js';

/** FORWARDING_TIMEOUT_MS's default: one attempt, connection to status line. */
export const FORWARDING_TIMEOUT_MS = 15_000;
/** How often waiting rows are looked for when nothing woke the worker. */
const POLL_MS = 1_000;
/** A claimed delivery is due again this long after its timeout (a crash mid-attempt). */
const LEASE_MARGIN_MS = 5_000;

export interface ForwardingLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface ForwardingOptions {
  clock: Clock;
  outbox: OutboxRepository;
  log?: ForwardingLogger;
  /** One attempt's limit, ms (FORWARDING_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Send to private, loopback and link-local addresses too (FORWARDING_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
  /** The jitter's source, in [0, 1). */
  random?: () => number;
  /** The event stream, told when a parking's forwarding changed (api/events/). */
  events?: Pick<EventPublisher, 'publishForwarding'>;
}

/** The secrets that sign now: the current one, and the one a rotation
 * replaced until its overlap ends. */
export function liveSecrets(parking: SigningSecrets, nowMs: number): string[] {
  if (parking.forwarding_secret === null) return [];
  const previous = parking.forwarding_previous_secret;
  const until = parking.forwarding_previous_secret_until;
  return previous !== null && until !== null && nowMs < until
    ? [parking.forwarding_secret, previous]
    : [parking.forwarding_secret];
}

/** What one attempt came to. */
type Attempt = { ok: true } | { ok: false; error: string; retryAfterMs?: number; gone?: true; aborted?: true };

export class ForwardingWorker {
  private timer: TimerHandle | undefined;
  private started = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly inFlight = new Set<AbortController>();
  private readonly failureLines = new FailureLines();

  constructor(private readonly options: ForwardingOptions) {}

  /** Starts the loop: a run now, then whenever woken, due or polled. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(0);
  }

  /** New rows were committed: run soon (a no-op unless started). */
  notify(): void {
    if (!this.started || this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Aborts requests in flight (they stay pending, sent again later) and waits for the loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    for (const controller of this.inFlight) controller.abort();
    await this.running;
  }

  /** One pass: group waiting rows, send every due delivery (one at a time
   * per URL, URLs in parallel). Resolves with the deliveries attempted. */
  async runOnce(): Promise<number> {
    const { outbox, clock } = this.options;
    await outbox.groupWaiting(clock.now());
    const byUrl = new Map<string, DeliveryRow[]>();
    for (const delivery of await outbox.due(clock.now())) {
      const list = byUrl.get(delivery.url) ?? [];
      list.push(delivery);
      byUrl.set(delivery.url, list);
    }
    let attempted = 0;
    await Promise.all(
      [...byUrl.values()].map(async (deliveries) => {
        const gone = new Set<number>(); // parkings whose URL a 410 disabled in this pass: their other deliveries wait
        for (const delivery of deliveries) {
          if (this.stopped) return;
          if (gone.has(delivery.parking_id)) continue;
          const lease = await outbox.claim(
            delivery,
            clock.now() + (this.options.timeoutMs ?? FORWARDING_TIMEOUT_MS) + LEASE_MARGIN_MS,
          );
          if (lease === undefined) continue; // another worker has it, or its URL was disabled since
          attempted += 1;
          if ((await this.send(delivery, lease)) === 'gone') gone.add(delivery.parking_id);
        }
      }),
    );
    return attempted;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      this.running = this.loop();
    }, delayMs);
  }

  private async loop(): Promise<void> {
    try {
      await this.runOnce();
    } catch (error) {
      this.options.log?.warn({ err: error }, 'forwarding pass failed');
    }
    let next: number | undefined;
    try {
      next = await this.options.outbox.nextDue(); // still running: stop() waits for it
    } catch (error) {
      this.options.log?.warn({ err: error }, 'forwarding: next due delivery unknown');
    }
    this.running = undefined;
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      this.schedule(0);
      return;
    }
    const untilDue = next === undefined ? POLL_MS : next - this.options.clock.now();
    this.schedule(Math.max(0, Math.min(POLL_MS, untilDue)));
  }

  private async send(delivery: DeliveryRow, lease: Lease): Promise<'delivered' | 'failed' | 'gone' | 'lost'> {
    const { clock, outbox } = this.options;
    const records = (await outbox.records(delivery.id)).map(forwardRecord);
    const body = JSON.stringify(records);
    const parking = await outbox.signingSecrets(delivery.parking_id);
    const secrets = parking ? liveSecrets(parking, clock.now()) : [];
    const attempt: Attempt =
      secrets.length === 0
        ? { ok: false, error: 'the parking has no forwarding secret' }
        : await this.post(delivery, body, secrets);
    try {
      return await this.record(delivery, lease, attempt, records.length);
    } finally {
      // Whatever came of it, the parking's forwarding status changed (told once it is written).
      this.options.events?.publishForwarding(delivery.parking_id);
    }
  }

  /** Writes what the attempt came to, while the lease is still held. */
  private async record(
    delivery: DeliveryRow,
    lease: Lease,
    attempt: Attempt,
    records: number,
  ): Promise<'delivered' | 'failed' | 'gone' | 'lost'> {
    const { clock, outbox } = this.options;
    const now = clock.now();
    if (attempt.ok) {
      if (!(await outbox.markDelivered(lease, now))) return this.lost(delivery, 'delivered');
      this.failureLines.delivered(delivery.url);
      this.options.log?.info({ delivery: delivery.id, url: delivery.url, records }, 'box logs forwarded');
      return 'delivered';
    }
    const { error } = attempt;
    if (this.stopped && attempt.aborted === true) {
      await outbox.release(lease, now); // shutting down: due again at once after a restart (unless another worker took it)
      return 'failed';
    }
    if (attempt.gone === true) {
      // Standard Webhooks: 410 Gone means the receiver wants no more. The
      // delivery stays pending (nothing is lost) and is due at once when revived.
      await outbox.disable(delivery.parking_id, delivery.url, now, error);
      const held = await outbox.markFailed(lease, `${error}: URL disabled until admin forwarding retry`, now, {
        dead: false,
        retryAt: now,
      });
      if (!held) return this.lost(delivery, error);
      this.options.log?.warn({ delivery: delivery.id, url: delivery.url }, 'forwarding URL disabled (410 Gone)');
      return 'gone';
    }
    const delay = retryDelay(delivery.attempts + 1, this.options.random);
    const retryAt = delay === undefined ? undefined : now + Math.max(delay, attempt.retryAfterMs ?? 0);
    const held = await outbox.markFailed(
      lease,
      error,
      now,
      retryAt === undefined ? { dead: true } : { dead: false, retryAt },
    );
    if (!held) return this.lost(delivery, error);
    const attempts = delivery.attempts + 1;
    const suppressed = this.failureLines.take(delivery.url, attempts);
    if (suppressed !== undefined) {
      this.options.log?.warn(
        {
          delivery: delivery.id,
          url: delivery.url,
          attempts,
          error,
          dead: retryAt === undefined,
          ...(suppressed > 0 ? { failures_not_logged: suppressed } : {}),
        },
        retryAt === undefined ? 'forwarding gave up (dead)' : 'forwarding failed; will retry',
      );
    }
    return 'failed';
  }

  /** The attempt outlived its lease and another worker took the delivery
   * over: its outcome is that worker's to record (a delivered attempt may
   * then be sent twice: at least once). */
  private lost(delivery: DeliveryRow, outcome: string): 'lost' {
    this.options.log?.warn(
      { delivery: delivery.id, url: delivery.url, outcome },
      'forwarding lease lost: another worker took the delivery over; outcome not recorded',
    );
    return 'lost';
  }

  /** POSTs once, signed with every live secret. */
  private async post(delivery: DeliveryRow, body: string, secrets: readonly string[]): Promise<Attempt> {
    const { clock } = this.options;
    const timeoutMs = this.options.timeoutMs ?? FORWARDING_TIMEOUT_MS;
    const controller = new AbortController();
    let timedOut = false;
    const timer = clock.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    this.inFlight.add(controller);
    // Unix seconds of this attempt (each retry is signed anew); the id is the delivery's.
    const timestamp = Math.floor(clock.now() / 1000);
    try {
      const answer = await postOnce(
        delivery.url,
        {
          'content-type': 'application/json',
          'user-agent': 'parkbench-forwarding/2',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(secrets, delivery.id, timestamp, body),
        },
        body,
        { signal: controller.signal, publicOnly: this.options.allowPrivate !== true },
      );
      if (answer.status >= 200 && answer.status < 300) return { ok: true };
      const error = `HTTP ${answer.status}`;
      if (answer.status === 410) return { ok: false, error: 'HTTP 410 Gone', gone: true };
      if (answer.status === 429 || answer.status === 503) {
        const header = answer.headers['retry-after'];
        const wait = retryAfterMs(typeof header === 'string' ? header : undefined, clock.now());
        if (wait !== undefined)
          return { ok: false, error: `${error} (Retry-After ${Math.round(wait / 1000)} s)`, retryAfterMs: wait };
      }
      return { ok: false, error };
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the timer callback above, which TypeScript's narrowing does not see
      if (timedOut) return { ok: false, error: `timeout after ${timeoutMs / 1000} s` };
      if (controller.signal.aborted) return { ok: false, error: 'aborted (shutting down)', aborted: true };
      // node's messages name the code and the address (connect ECONNREFUSED 10.0.0.1:443);
      // a refused private address says why (address-guard.ts).
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    } finally {
      clock.clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }
}
