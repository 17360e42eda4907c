// The one row of `parkbench admin demo`'s data (table `demo`): its client
// secret and driver password in clear, so they can be printed again.
import type { Db } from '../db/open.js';

export interface DemoRow {
  client_app_row_id: number;
  client_secret: string;
  user_id: number;
  driver_password: string;
  parking_id: number;
}

export class DemoRepository {
  private readonly select;
  private readonly insertRow;

  constructor(db: Db) {
    this.select = db.prepare<[], DemoRow>(
      'SELECT client_app_row_id, client_secret, user_id, driver_password, parking_id FROM demo WHERE id = 1',
    );
    this.insertRow = db.prepare<[number, string, number, string, number]>(
      'INSERT INTO demo (id, client_app_row_id, client_secret, user_id, driver_password, parking_id) VALUES (1, ?, ?, ?, ?, ?)',
    );
  }

  find(): DemoRow | undefined {
    return this.select.get();
  }

  record(row: DemoRow): void {
    this.insertRow.run(row.client_app_row_id, row.client_secret, row.user_id, row.driver_password, row.parking_id);
  }
}
