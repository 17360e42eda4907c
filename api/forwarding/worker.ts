// The forwarding worker (spec 6, issue 5): groups waiting outbox rows into
// deliveries, POSTs each as a JSON array of spec 2.2 records with
// X-Parkbench-Delivery and X-Parkbench-Signature, 10 s timeout, and retries
// with exponential backoff and jitter (seconds first, up to an hour) until
// FORWARDING_MAX_AGE_HOURS, then dead. Only 2xx delivers (a redirect is not
// followed). At least once: a delivery is marked delivered only after the
// 2xx, so a crash in between sends it again, with the same id and records.
// Timers and timeouts run on the injected clock.
import { backoffDelay, type BackoffPolicy } from '../../lib/backoff.js';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import type { ForwardRow } from '../repositories/box-logs.js';
import type { ParkingRepository } from '../repositories/parkings.js';
import type { DeliveryRow, OutboxRepository } from './outbox.js';
import { signatureHeader } from './signature.js';

export const FORWARDING_TIMEOUT_MS = 10_000;
/** First retry after about 5 s, doubling, at most an hour apart. */
export const FORWARDING_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 5_000, maxMs: 3_600_000, factor: 2, jitter: 0.5 });
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
  parkings: ParkingRepository;
  maxAgeMs: number;
  log?: ForwardingLogger;
  timeoutMs?: number;
  backoff?: BackoffPolicy;
  random?: () => number;
  fetch?: typeof fetch;
}

/** A record of spec 2.2: the 2.1 fields, `email` added, no wrapper; and
 * `verified`, whether the server checked the box's response (issue 12). */
export function forwardRecord(row: ForwardRow): Record<string, unknown> {
  return {
    fo_user_id: row.fo_user_id,
    smart_key_id: row.smart_key_id,
    equipment_id: row.equipment_id,
    secured_parking_id: row.secured_parking_id,
    type: row.type,
    command: row.command,
    command_decrypted: row.command_decrypted,
    response: row.response,
    response_decrypted: row.response_decrypted,
    offline: row.offline === 1,
    created_at: row.created_at,
    point_attributes: row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
    email: row.email,
    verified: row.verified === 1,
  };
}

export class ForwardingWorker {
  private timer: TimerHandle | undefined;
  private started = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly inFlight = new Set<AbortController>();

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
    outbox.groupWaiting(clock.now());
    const byUrl = new Map<string, DeliveryRow[]>();
    for (const delivery of outbox.due(clock.now())) {
      const list = byUrl.get(delivery.url) ?? [];
      list.push(delivery);
      byUrl.set(delivery.url, list);
    }
    let attempted = 0;
    await Promise.all(
      [...byUrl.values()].map(async (deliveries) => {
        for (const delivery of deliveries) {
          if (this.stopped) return;
          if (!outbox.claim(delivery, clock.now() + (this.options.timeoutMs ?? FORWARDING_TIMEOUT_MS) + LEASE_MARGIN_MS)) continue;
          attempted += 1;
          await this.send(delivery);
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
    this.running = undefined;
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      this.schedule(0);
      return;
    }
    const next = this.options.outbox.nextDue();
    const untilDue = next === undefined ? POLL_MS : next - this.options.clock.now();
    this.schedule(Math.max(0, Math.min(POLL_MS, untilDue)));
  }

  private async send(delivery: DeliveryRow): Promise<void> {
    const { clock, outbox } = this.options;
    const records = outbox.records(delivery.id).map(forwardRecord);
    const body = JSON.stringify(records);
    const secret = this.options.parkings.findById(delivery.parking_id)?.forwarding_secret ?? null;
    let error: string | undefined;
    if (secret === null) {
      error = 'the parking has no forwarding secret';
    } else {
      error = await this.post(delivery, body, secret);
    }
    const now = clock.now();
    if (error === undefined) {
      outbox.markDelivered(delivery.id, now);
      this.options.log?.info({ delivery: delivery.id, url: delivery.url, records: records.length }, 'box logs forwarded');
      return;
    }
    if (this.stopped && error.startsWith('aborted')) {
      outbox.release(delivery.id, now); // shutting down: due again at once after a restart
      return;
    }
    const dead = now - delivery.oldest_record_at >= this.options.maxAgeMs;
    const retryAt = now + backoffDelay(this.options.backoff ?? FORWARDING_BACKOFF, delivery.attempts, this.options.random);
    outbox.markFailed(delivery.id, error, now, dead ? { dead: true } : { dead: false, retryAt });
    this.options.log?.warn({ delivery: delivery.id, url: delivery.url, attempts: delivery.attempts + 1, error, dead }, dead ? 'forwarding gave up (dead)' : 'forwarding failed; will retry');
  }

  /** POSTs once; undefined on a 2xx, else what went wrong. */
  private async post(delivery: DeliveryRow, body: string, secret: string): Promise<string | undefined> {
    const { clock } = this.options;
    const timeoutMs = this.options.timeoutMs ?? FORWARDING_TIMEOUT_MS;
    const controller = new AbortController();
    let timedOut = false;
    const timer = clock.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    this.inFlight.add(controller);
    try {
      const response = await (this.options.fetch ?? fetch)(delivery.url, {
        method: 'POST',
        redirect: 'manual',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'parkbench-forwarding/1',
          'x-parkbench-delivery': delivery.id,
          'x-parkbench-signature': signatureHeader(secret, body, Math.floor(clock.now() / 1000)),
        },
        body,
      });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 300 ? undefined : `HTTP ${response.status}`;
    } catch (error) {
      if (timedOut) return `timeout after ${timeoutMs / 1000} s`;
      if (controller.signal.aborted) return 'aborted (shutting down)';
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
    } finally {
      clock.clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }
}
