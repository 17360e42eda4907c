// Version 1 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 1,
  name: 'client apps, drivers, tokens, parkings, boxes, demo',
  sqlite: `
      CREATE TABLE client_apps (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        client_app_id TEXT NOT NULL UNIQUE,
        client_secret_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );

      -- Car drivers. Emails are stored trimmed and lowercased.
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        first_name TEXT NOT NULL,
        last_name TEXT NOT NULL,
        phone TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );

      -- One row per access + refresh pair; only SHA-256 hashes are kept.
      -- Rotation and revocation set revoked_at on the whole pair.
      CREATE TABLE tokens (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        client_app_id INTEGER NOT NULL REFERENCES client_apps(id),
        access_token_hash BLOB NOT NULL UNIQUE,
        refresh_token_hash BLOB NOT NULL UNIQUE,
        access_expires_at INTEGER NOT NULL,
        refresh_expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE INDEX tokens_user ON tokens(user_id);

      CREATE TABLE secured_parkings (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        currency TEXT NOT NULL CHECK (length(currency) = 3),
        price_per_hour_minor INTEGER NOT NULL CHECK (price_per_hour_minor >= 0),
        max_duration_minutes INTEGER NOT NULL CHECK (max_duration_minutes > 0),
        tries INTEGER NOT NULL CHECK (tries BETWEEN 1 AND 255),
        is_online INTEGER NOT NULL DEFAULT 0,
        is_active INTEGER NOT NULL DEFAULT 1,
        parking_key TEXT NOT NULL,
        parking_key_next TEXT,
        forwarding_url TEXT,
        forwarding_expose INTEGER NOT NULL DEFAULT 0,
        forwarding_secret TEXT,
        created_at INTEGER NOT NULL
      );

      CREATE TABLE boxes (
        id INTEGER PRIMARY KEY,
        module_id INTEGER NOT NULL UNIQUE CHECK (module_id BETWEEN 0 AND 4294967295),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        direction TEXT NOT NULL CHECK (direction IN ('entrance', 'exit')),
        mac_address TEXT NOT NULL UNIQUE,
        box_key TEXT NOT NULL,
        mqtt_username TEXT NOT NULL UNIQUE,
        mqtt_password_hash TEXT NOT NULL,
        skew_seconds INTEGER NOT NULL DEFAULT 120,
        min_battery_mv INTEGER NOT NULL DEFAULT 3300,
        next_control_seq INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX boxes_parking ON boxes(parking_id);

      -- Demo data of \`parkbench admin demo\`: its client secret and driver
      -- password are kept in clear on purpose so later runs can print them
      -- again. Only demo credentials live here.
      CREATE TABLE demo (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        client_app_row_id INTEGER NOT NULL REFERENCES client_apps(id),
        client_secret TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        driver_password TEXT NOT NULL,
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id)
      );
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
