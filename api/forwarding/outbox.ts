// The forwarding outbox (spec 6): rows written with their box logs, grouped
// into deliveries of up to 100 records and 256 KiB for one URL, the
// deliveries' states, and the URLs a 410 Gone disabled. Every write is one
// statement or one transaction, so several API processes can share the file
// (a row is claimed by one delivery only).
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/open.js';
import type { ForwardRow } from '../repositories/box-logs.js';
import { forwardRecord, MAX_RECORDS_PER_DELIVERY, recordsThatFit } from './record.js';

export { MAX_RECORDS_PER_DELIVERY } from './record.js';

export type DeliveryState = 'pending' | 'delivered' | 'dead';

export interface DeliveryRow {
  id: string;
  parking_id: number;
  url: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  oldest_record_at: number;
  last_error: string | null;
}

export interface UrlStatus {
  parking_id: number;
  url: string;
  pending: number;
  delivered: number;
  dead: number;
  last_error: string | null;
  last_attempt_at: number | null;
  /** When a 410 Gone disabled the URL (ms); null when it is enabled. */
  disabled_at: number | null;
}

/** No delivery of a URL a 410 disabled is due (the same condition in every query). */
const ENABLED =
  'NOT EXISTS (SELECT 1 FROM forwarding_disabled_urls x WHERE x.parking_id = forwarding_deliveries.parking_id AND x.url = forwarding_deliveries.url)';

export class OutboxRepository {
  private readonly insertRow;
  private readonly waitingUrls;
  private readonly waitingOfUrl;
  private readonly claimRow;
  private readonly insertDelivery;
  private readonly dueDeliveries;
  private readonly recordsOf;
  private readonly deliveredUpdate;
  private readonly failedUpdate;
  private readonly reviveUpdate;
  private readonly nextDueOf;
  private readonly claimDelivery;
  private readonly releaseDelivery;
  private readonly statusRows;
  private readonly disableUrl;
  private readonly enableUrls;
  private readonly wakeParking;
  private readonly replayRows;

  constructor(private readonly db: Db) {
    this.insertRow = db.prepare<[number, number, string, number]>(
      'INSERT INTO forwarding_outbox (box_log_id, parking_id, url, created_at) VALUES (?, ?, ?, ?)',
    );
    this.waitingUrls = db.prepare<[], { url: string; parking_id: number }>(
      'SELECT DISTINCT url, parking_id FROM forwarding_outbox WHERE delivery_id IS NULL',
    );
    this.waitingOfUrl = db.prepare<[string, number, number], ForwardRow & { outbox_id: number; queued_at: number }>(
      `SELECT o.id AS outbox_id, o.created_at AS queued_at, b.id, b.fo_user_id, b.smart_key_id, b.equipment_id, b.secured_parking_id, b.type, b.command,
              b.command_decrypted, b.response, b.response_decrypted, b.offline, b.created_at, b.latitude, b.longitude, u.email, b.verified
       FROM forwarding_outbox o JOIN box_logs b ON b.id = o.box_log_id LEFT JOIN users u ON u.id = b.fo_user_id
       WHERE o.delivery_id IS NULL AND o.url = ? AND o.parking_id = ? ORDER BY o.id LIMIT ?`,
    );
    this.claimRow = db.prepare<[string, number]>(
      'UPDATE forwarding_outbox SET delivery_id = ? WHERE id = ? AND delivery_id IS NULL',
    );
    this.insertDelivery = db.prepare<[string, number, string, number, number, number]>(
      "INSERT INTO forwarding_deliveries (id, parking_id, url, state, next_attempt_at, oldest_record_at, created_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
    );
    this.dueDeliveries = db.prepare<[number], DeliveryRow>(
      `SELECT id, parking_id, url, state, attempts, next_attempt_at, oldest_record_at, last_error FROM forwarding_deliveries WHERE state = 'pending' AND next_attempt_at <= ? AND ${ENABLED} ORDER BY next_attempt_at`,
    );
    this.recordsOf = db.prepare<[string], ForwardRow>(
      `SELECT b.id, b.fo_user_id, b.smart_key_id, b.equipment_id, b.secured_parking_id, b.type, b.command, b.command_decrypted, b.response,
              b.response_decrypted, b.offline, b.created_at, b.latitude, b.longitude, u.email, b.verified
       FROM forwarding_outbox o JOIN box_logs b ON b.id = o.box_log_id LEFT JOIN users u ON u.id = b.fo_user_id
       WHERE o.delivery_id = ? ORDER BY o.id`,
    );
    this.deliveredUpdate = db.prepare<[number, number, string]>(
      "UPDATE forwarding_deliveries SET state = 'delivered', attempts = attempts + 1, last_attempt_at = ?, delivered_at = ?, last_error = NULL WHERE id = ?",
    );
    this.failedUpdate = db.prepare<[DeliveryState, number, number, string, string]>(
      'UPDATE forwarding_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, last_attempt_at = ?, last_error = ? WHERE id = ?',
    );
    this.reviveUpdate = db.prepare<[number, number, number]>(
      "UPDATE forwarding_deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, oldest_record_at = ? WHERE state = 'dead' AND parking_id = ?",
    );
    this.claimDelivery = db.prepare<[number, string, number]>(
      "UPDATE forwarding_deliveries SET next_attempt_at = ? WHERE id = ? AND state = 'pending' AND next_attempt_at = ?",
    );
    this.releaseDelivery = db.prepare<[number, string]>(
      "UPDATE forwarding_deliveries SET next_attempt_at = ? WHERE id = ? AND state = 'pending'",
    );
    this.nextDueOf = db.prepare<[], { next: number | null }>(
      `SELECT min(next_attempt_at) AS next FROM forwarding_deliveries WHERE state = 'pending' AND ${ENABLED}`,
    );
    this.statusRows = db.prepare<[number | null, number | null], UrlStatus>(
      `SELECT o.parking_id, o.url,
              sum(CASE WHEN d.state IS NULL OR d.state = 'pending' THEN 1 ELSE 0 END) AS pending,
              sum(CASE WHEN d.state = 'delivered' THEN 1 ELSE 0 END) AS delivered,
              sum(CASE WHEN d.state = 'dead' THEN 1 ELSE 0 END) AS dead,
              (SELECT last_error FROM forwarding_deliveries x WHERE x.url = o.url AND x.parking_id = o.parking_id AND x.last_attempt_at IS NOT NULL
               ORDER BY x.last_attempt_at DESC LIMIT 1) AS last_error,
              (SELECT max(last_attempt_at) FROM forwarding_deliveries x WHERE x.url = o.url AND x.parking_id = o.parking_id) AS last_attempt_at,
              (SELECT disabled_at FROM forwarding_disabled_urls x WHERE x.url = o.url AND x.parking_id = o.parking_id) AS disabled_at
       FROM forwarding_outbox o LEFT JOIN forwarding_deliveries d ON d.id = o.delivery_id
       WHERE ? IS NULL OR o.parking_id = ?
       GROUP BY o.parking_id, o.url ORDER BY o.parking_id, o.url`,
    );
    this.disableUrl = db.prepare<[number, string, number, string]>(
      'INSERT OR IGNORE INTO forwarding_disabled_urls (parking_id, url, disabled_at, reason) VALUES (?, ?, ?, ?)',
    );
    this.enableUrls = db.prepare<[number], { url: string }>(
      'DELETE FROM forwarding_disabled_urls WHERE parking_id = ? RETURNING url',
    );
    this.wakeParking = db.prepare<[number, number]>(
      "UPDATE forwarding_deliveries SET next_attempt_at = ? WHERE state = 'pending' AND parking_id = ?",
    );
    // No index of box logs by parking (migration 5): a replay is a rare
    // operator command, a scan of the table is its price.
    this.replayRows = db.prepare<[string, number, number, number, number]>(
      `INSERT INTO forwarding_outbox (box_log_id, parking_id, url, created_at)
       SELECT id, secured_parking_id, ?, ? FROM box_logs WHERE secured_parking_id = ? AND received_at >= ? AND (verified = 1 OR ? = 1) ORDER BY id`,
    );
  }

  /** Inside the box log's transaction. */
  enqueue(boxLogId: number, parkingId: number, url: string, nowMs: number): void {
    this.insertRow.run(boxLogId, parkingId, url, nowMs);
  }

  /** Groups waiting rows into deliveries (one URL each, up to 100 records
   * and 256 KiB of body, whichever comes first); returns how many deliveries
   * were made. */
  groupWaiting(nowMs: number): number {
    return this.db
      .transaction(() => {
        let made = 0;
        for (const { url, parking_id: parkingId } of this.waitingUrls.all()) {
          for (;;) {
            const waiting = this.waitingOfUrl.all(url, parkingId, MAX_RECORDS_PER_DELIVERY);
            if (waiting.length === 0) break;
            const rows = waiting.slice(
              0,
              recordsThatFit(waiting.map((row) => Buffer.byteLength(JSON.stringify(forwardRecord(row))))),
            );
            const id = randomUUID();
            this.insertDelivery.run(id, parkingId, url, nowMs, Math.min(...rows.map((row) => row.queued_at)), nowMs);
            for (const row of rows) this.claimRow.run(id, row.outbox_id);
            made += 1;
          }
        }
        return made;
      })
      .immediate();
  }

  due(nowMs: number): DeliveryRow[] {
    return this.dueDeliveries.all(nowMs);
  }

  /** Takes a due delivery for one attempt: its next attempt moves to
   * `leaseUntil`, so another pass (or process) does not send it meanwhile;
   * false when someone else took it first. A crash mid-attempt leaves it due
   * again at `leaseUntil`. */
  claim(delivery: DeliveryRow, leaseUntil: number): boolean {
    return this.claimDelivery.run(leaseUntil, delivery.id, delivery.next_attempt_at).changes === 1;
  }

  /** Gives a claimed delivery back, due at `dueAt` (an attempt cut by shutdown). */
  release(deliveryId: string, dueAt: number): void {
    this.releaseDelivery.run(dueAt, deliveryId);
  }

  records(deliveryId: string): ForwardRow[] {
    return this.recordsOf.all(deliveryId);
  }

  markDelivered(deliveryId: string, nowMs: number): void {
    this.deliveredUpdate.run(nowMs, nowMs, deliveryId);
  }

  markFailed(
    deliveryId: string,
    error: string,
    nowMs: number,
    next: { dead: true } | { dead: false; retryAt: number },
  ): void {
    this.failedUpdate.run(
      next.dead ? 'dead' : 'pending',
      next.dead ? nowMs : next.retryAt,
      nowMs,
      error.slice(0, 500),
      deliveryId,
    );
  }

  /** Dead deliveries of a parking become pending again, due now, with a
   * fresh retry schedule; the URLs a 410 disabled are enabled, their
   * deliveries due now. Returns the deliveries revived and the URLs enabled. */
  revive(parkingId: number, nowMs: number): { revived: number; enabledUrls: string[] } {
    return this.db
      .transaction(() => {
        const enabledUrls = this.enableUrls.all(parkingId).map((row) => row.url);
        if (enabledUrls.length > 0) this.wakeParking.run(nowMs, parkingId);
        return { revived: this.reviveUpdate.run(nowMs, nowMs, parkingId).changes, enabledUrls };
      })
      .immediate();
  }

  /** A 410 Gone: nothing more is sent to this URL of this parking until revive. */
  disable(parkingId: number, url: string, nowMs: number, reason: string): void {
    this.disableUrl.run(parkingId, url, nowMs, reason);
  }

  /** Queues again, as new rows (so new deliveries), the parking's box logs
   * received since `sinceMs`, for `url`; unverified ones only when
   * `unverifiedToo`. Returns how many. */
  replay(parkingId: number, url: string, sinceMs: number, unverifiedToo: boolean, nowMs: number): number {
    return this.replayRows.run(url, nowMs, parkingId, sinceMs, unverifiedToo ? 1 : 0).changes;
  }

  /** When the next pending delivery is due (ms), or undefined. */
  nextDue(): number | undefined {
    return this.nextDueOf.get()?.next ?? undefined;
  }

  status(parkingId?: number): UrlStatus[] {
    const id = parkingId ?? null;
    return this.statusRows.all(id, id);
  }
}
