// Version 4 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 4,
  name: 'box logs, what boxes tell, forwarding outbox',
  sqlite: `
      -- Box logs as sent (spec 2.1), plus what verification found. Over HTTP
      -- fo_user_id is the token's user; from MQTT it may be null (a control
      -- command has no driver), and so may smart_key_id (a key minted by a
      -- test tool is no smart key of the service).
      CREATE TABLE box_logs (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL CHECK (source IN ('http', 'mqtt')),
        fo_user_id INTEGER REFERENCES users(id),
        smart_key_id INTEGER REFERENCES smart_keys(id),
        equipment_id INTEGER NOT NULL,
        secured_parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        type TEXT NOT NULL CHECK (type IN ('in', 'out', 'control')),
        command TEXT,
        command_decrypted TEXT,
        response TEXT,
        response_decrypted TEXT,
        offline INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        latitude REAL,
        longitude REAL,
        verified INTEGER NOT NULL,
        -- From the verified response only.
        box_seq INTEGER,
        status INTEGER,
        received_at INTEGER NOT NULL
      );
      -- A verified response is stored once; unverified logs never collide.
      CREATE UNIQUE INDEX box_logs_verified_seq ON box_logs(equipment_id, box_seq) WHERE verified = 1;
      CREATE INDEX box_logs_parking ON box_logs(secured_parking_id);

      -- What the service learns from verified responses (docs/protocol.md).
      ALTER TABLE boxes ADD COLUMN last_seen_at INTEGER;
      ALTER TABLE boxes ADD COLUMN last_box_seq INTEGER;
      ALTER TABLE boxes ADD COLUMN last_box_time INTEGER;
      ALTER TABLE boxes ADD COLUMN box_time_drift_seconds INTEGER;
      ALTER TABLE boxes ADD COLUMN battery_mv INTEGER;
      ALTER TABLE boxes ADD COLUMN last_control_seq INTEGER;

      -- Forwarding (spec 6): one row per box log to deliver, written in the
      -- box log's transaction; grouped into deliveries of up to 100 records
      -- for one URL. A delivery keeps its id (X-Parkbench-Delivery) and its
      -- records across retries, so a receiver can deduplicate.
      CREATE TABLE forwarding_deliveries (
        id TEXT PRIMARY KEY,
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        url TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        oldest_record_at INTEGER NOT NULL,
        last_attempt_at INTEGER,
        last_error TEXT,
        delivered_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX forwarding_deliveries_due ON forwarding_deliveries(state, next_attempt_at);
      CREATE TABLE forwarding_outbox (
        id INTEGER PRIMARY KEY,
        box_log_id INTEGER NOT NULL REFERENCES box_logs(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        url TEXT NOT NULL,
        delivery_id TEXT REFERENCES forwarding_deliveries(id),
        created_at INTEGER NOT NULL
      );
      CREATE INDEX forwarding_outbox_waiting ON forwarding_outbox(url, id) WHERE delivery_id IS NULL;
      CREATE INDEX forwarding_outbox_delivery ON forwarding_outbox(delivery_id);
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
