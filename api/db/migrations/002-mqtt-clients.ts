// Version 2 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 2,
  name: 'MQTT accounts of gateways and operators',
  sqlite: `
      -- Boxes keep their MQTT account in boxes; these are the other clients
      -- of the broker. Passwords are stored in mosquitto's $7$ format.
      CREATE TABLE mqtt_clients (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('gateway', 'operator')),
        username TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
