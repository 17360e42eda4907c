// Version 12 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 12,
  name: 'true availability of boxes: derived from the box and its gateway',
  sqlite: `
      -- What the API derived about each box from MQTT (api/mqtt/box-availability.ts):
      -- its own retained availability and, behind a gateway, the gateway's.
      -- Written by the API process on every change, read by admin box status
      -- and the operator API in any process. No foreign key: a message may
      -- name a box this database does not hold.
      CREATE TABLE box_availability (
        module_id INTEGER PRIMARY KEY,
        availability TEXT NOT NULL CHECK (availability IN ('online', 'offline', 'unknown')),
        reason TEXT,
        since INTEGER,
        gateway_id TEXT,
        updated_at INTEGER NOT NULL
      );
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
