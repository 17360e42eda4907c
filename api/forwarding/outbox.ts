// The forwarding outbox (spec 6): rows written with their box logs, grouped
// into deliveries of up to 100 records for one URL, and the deliveries'
// states. Every write is one statement or one transaction, so several API
// processes can share the file (a row is claimed by one delivery only).
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/open.js';
import type { ForwardRow } from '../repositories/box-logs.js';

/** Records per delivery (one POST). */
export const MAX_RECORDS_PER_DELIVERY = 100;

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
}

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

  constructor(private readonly db: Db) {
    this.insertRow = db.prepare<[number, number, string, number]>('INSERT INTO forwarding_outbox (box_log_id, parking_id, url, created_at) VALUES (?, ?, ?, ?)');
    this.waitingUrls = db.prepare<[], { url: string; parking_id: number }>('SELECT DISTINCT url, parking_id FROM forwarding_outbox WHERE delivery_id IS NULL');
    this.waitingOfUrl = db.prepare<[string, number, number], { id: number; created_at: number }>(
      'SELECT id, created_at FROM forwarding_outbox WHERE delivery_id IS NULL AND url = ? AND parking_id = ? ORDER BY id LIMIT ?',
    );
    this.claimRow = db.prepare<[string, number]>('UPDATE forwarding_outbox SET delivery_id = ? WHERE id = ? AND delivery_id IS NULL');
    this.insertDelivery = db.prepare<[string, number, string, number, number, number]>(
      "INSERT INTO forwarding_deliveries (id, parking_id, url, state, next_attempt_at, oldest_record_at, created_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
    );
    this.dueDeliveries = db.prepare<[number], DeliveryRow>(
      "SELECT id, parking_id, url, state, attempts, next_attempt_at, oldest_record_at, last_error FROM forwarding_deliveries WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at",
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
    this.releaseDelivery = db.prepare<[number, string]>("UPDATE forwarding_deliveries SET next_attempt_at = ? WHERE id = ? AND state = 'pending'");
    this.nextDueOf = db.prepare<[], { next: number | null }>("SELECT min(next_attempt_at) AS next FROM forwarding_deliveries WHERE state = 'pending'");
    this.statusRows = db.prepare<[number | null, number | null], UrlStatus>(
      `SELECT o.parking_id, o.url,
              sum(CASE WHEN d.state IS NULL OR d.state = 'pending' THEN 1 ELSE 0 END) AS pending,
              sum(CASE WHEN d.state = 'delivered' THEN 1 ELSE 0 END) AS delivered,
              sum(CASE WHEN d.state = 'dead' THEN 1 ELSE 0 END) AS dead,
              (SELECT last_error FROM forwarding_deliveries x WHERE x.url = o.url AND x.parking_id = o.parking_id AND x.last_attempt_at IS NOT NULL
               ORDER BY x.last_attempt_at DESC LIMIT 1) AS last_error,
              (SELECT max(last_attempt_at) FROM forwarding_deliveries x WHERE x.url = o.url AND x.parking_id = o.parking_id) AS last_attempt_at
       FROM forwarding_outbox o LEFT JOIN forwarding_deliveries d ON d.id = o.delivery_id
       WHERE ? IS NULL OR o.parking_id = ?
       GROUP BY o.parking_id, o.url ORDER BY o.parking_id, o.url`,
    );
  }

  /** Inside the box log's transaction. */
  enqueue(boxLogId: number, parkingId: number, url: string, nowMs: number): void {
    this.insertRow.run(boxLogId, parkingId, url, nowMs);
  }

  /** Groups waiting rows into deliveries (up to 100 records each, one URL);
   * returns how many deliveries were made. */
  groupWaiting(nowMs: number): number {
    return this.db.transaction(() => {
      let made = 0;
      for (const { url, parking_id: parkingId } of this.waitingUrls.all()) {
        for (;;) {
          const rows = this.waitingOfUrl.all(url, parkingId, MAX_RECORDS_PER_DELIVERY);
          if (rows.length === 0) break;
          const id = randomUUID();
          this.insertDelivery.run(id, parkingId, url, nowMs, Math.min(...rows.map((row) => row.created_at)), nowMs);
          for (const row of rows) this.claimRow.run(id, row.id);
          made += 1;
          if (rows.length < MAX_RECORDS_PER_DELIVERY) break;
        }
      }
      return made;
    }).immediate();
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

  markFailed(deliveryId: string, error: string, nowMs: number, next: { dead: true } | { dead: false; retryAt: number }): void {
    this.failedUpdate.run(next.dead ? 'dead' : 'pending', next.dead ? nowMs : next.retryAt, nowMs, error.slice(0, 500), deliveryId);
  }

  /** Dead deliveries of a parking become pending again, due now, with a fresh age. */
  revive(parkingId: number, nowMs: number): number {
    return this.reviveUpdate.run(nowMs, nowMs, parkingId).changes;
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
