// Box logs (spec 2.1) as stored, with what verification found.
import type { Selectable } from 'kysely';
import type { Db } from '../db/open.js';
import type { BoxLogsTable, OuterJoined, UsersTable } from '../db/schema.js';
import type { BoxLogInput, BoxLogSource } from './types.js';

export interface StoredBoxLog {
  source: BoxLogSource;
  entry: BoxLogInput;
  verified: boolean;
  boxSeq: number | null;
  status: number | null;
  receivedAt: number;
  /** An unverified MQTT log's message digest (stored once); null otherwise. */
  messageDigest: string | null;
}

/** A stored log as forwarded (spec 2.2): the 2.1 fields and the driver's email. */
export type ForwardRow = Pick<
  Selectable<BoxLogsTable>,
  | 'id'
  | 'fo_user_id'
  | 'smart_key_id'
  | 'equipment_id'
  | 'secured_parking_id'
  | 'type'
  | 'command'
  | 'command_decrypted'
  | 'response'
  | 'response_decrypted'
  | 'offline'
  | 'created_at'
  | 'latitude'
  | 'longitude'
  | 'verified'
> &
  OuterJoined<Pick<Selectable<UsersTable>, 'email'>>;

/** A box log's values in the column order of the box_logs INSERT, on both engines. */
export type BoxLogRow = [
  string,
  number | null,
  number | null,
  number,
  number,
  string,
  string | null,
  string | null,
  string | null,
  string | null,
  number,
  string,
  number | null,
  number | null,
  number,
  number | null,
  number | null,
  number,
  string | null,
];

/** The values of `log` as the box_logs INSERT takes them. */
export function boxLogRow(log: StoredBoxLog): BoxLogRow {
  const e = log.entry;
  return [
    log.source,
    e.fo_user_id,
    e.smart_key_id,
    e.equipment_id,
    e.secured_parking_id,
    e.type,
    e.command,
    e.command_decrypted,
    e.response,
    e.response_decrypted,
    e.offline ? 1 : 0,
    e.created_at,
    e.point_attributes?.latitude ?? null,
    e.point_attributes?.longitude ?? null,
    log.verified ? 1 : 0,
    log.boxSeq,
    log.status,
    log.receivedAt,
    log.messageDigest,
  ];
}

export class BoxLogRepository {
  private readonly insertRow;
  private readonly insertUniqueRow;
  private readonly verifiedBySeq;
  private readonly byDigest;
  private readonly byId;

  constructor(db: Db) {
    const columns = `(source, fo_user_id, smart_key_id, equipment_id, secured_parking_id, type, command, command_decrypted, response, response_decrypted,
       offline, created_at, latitude, longitude, verified, box_seq, status, received_at, message_digest)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
    this.insertRow = db.prepare<BoxLogRow>(`INSERT INTO box_logs ${columns}`);
    // The partial unique indexes on verified (equipment_id, box_seq) and on
    // message_digest are the only uniqueness a box log can meet; ON CONFLICT
    // DO NOTHING (unlike OR IGNORE) still raises on any other constraint, so
    // nothing is dropped silently.
    this.insertUniqueRow = db.prepare<BoxLogRow>(`INSERT INTO box_logs ${columns} ON CONFLICT DO NOTHING`);
    this.verifiedBySeq = db.prepare<[number, number], { id: number }>(
      'SELECT id FROM box_logs WHERE equipment_id = ? AND box_seq = ? AND verified = 1',
    );
    this.byDigest = db.prepare<[string], { id: number }>('SELECT id FROM box_logs WHERE message_digest = ?');
    this.byId = db.prepare<[number], Record<string, unknown>>('SELECT * FROM box_logs WHERE id = ?');
  }

  /** Stores a log; for a verified one, or an MQTT message, already stored,
   * stores nothing and returns the stored id with duplicate true. */
  insert(log: StoredBoxLog): { id: number; duplicate: boolean } {
    const tuple = boxLogRow(log);
    if (!log.verified && log.messageDigest === null)
      return { id: Number(this.insertRow.run(...tuple).lastInsertRowid), duplicate: false };
    const result = this.insertUniqueRow.run(...tuple);
    if (result.changes === 1) return { id: Number(result.lastInsertRowid), duplicate: false };
    if (log.messageDigest !== null) {
      const stored = this.byDigest.get(log.messageDigest);
      if (!stored) throw new Error(`box log of message ${log.messageDigest} ignored but not found`);
      return { id: stored.id, duplicate: true };
    }
    const existing = this.verifiedBySeq.get(log.entry.equipment_id, log.boxSeq ?? -1);
    if (!existing)
      throw new Error(`verified box log ${log.entry.equipment_id}/${String(log.boxSeq)} ignored but not found`);
    return { id: existing.id, duplicate: true };
  }

  findById(id: number): Record<string, unknown> | undefined {
    return this.byId.get(id);
  }
}
