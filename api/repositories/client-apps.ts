// Client applications (the spec's client_app_id / client_secret).
import type { Db } from '../db/open.js';

export interface ClientAppRow {
  id: number;
  name: string;
  client_app_id: string;
  client_secret_hash: string;
}

export class ClientAppRepository {
  private readonly byPublicId;
  private readonly insertRow;
  private readonly byRowId;

  constructor(db: Db) {
    this.byPublicId = db.prepare<[string], ClientAppRow>(
      'SELECT id, name, client_app_id, client_secret_hash FROM client_apps WHERE client_app_id = ?',
    );
    this.byRowId = db.prepare<[number], ClientAppRow>(
      'SELECT id, name, client_app_id, client_secret_hash FROM client_apps WHERE id = ?',
    );
    this.insertRow = db.prepare<[string, string, string, number]>(
      'INSERT INTO client_apps (name, client_app_id, client_secret_hash, created_at) VALUES (?, ?, ?, ?)',
    );
  }

  findByClientAppId(clientAppId: string): ClientAppRow | undefined {
    return this.byPublicId.get(clientAppId);
  }

  findById(id: number): ClientAppRow | undefined {
    return this.byRowId.get(id);
  }

  insert(name: string, clientAppId: string, secretHash: string, nowMs: number): number {
    return Number(this.insertRow.run(name, clientAppId, secretHash, nowMs).lastInsertRowid);
  }
}
