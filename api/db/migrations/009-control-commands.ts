// Version 9 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 9,
  name: 'durable control commands (REVOKE, SET_ISSUER) per box; revoked smart keys',
  sqlite: `
      -- Control commands the service owes its boxes (docs/protocol.md,
      -- REVOKE and SET_ISSUER), delivered by the API's dispatcher
      -- (api/control/) per box in id order, one in flight per box. The body
      -- is JSON (REVOKE {"entries":[{"key_id","until"}]}, SET_ISSUER
      -- {"issuer_key","issuer_key_previous"} in hex): the frame is sealed at
      -- send time under K_box with a fresh control sequence, control_seq.
      --   operation: the deliveries of one operator request share it (a
      --     parking switches once all of them are done);
      --   purpose: revoke, set_access, rotate_install or rotate_drop;
      --   requested_by: what asked for it (the admin command);
      --   in_flight_until: a dispatcher sent it and waits for the answer
      --     until then (ms); another process leaves it alone meanwhile;
      --   replays: REPLAY answers met (the sequence skipped ahead each time).
      CREATE TABLE control_commands (
        id INTEGER PRIMARY KEY,
        module_id INTEGER NOT NULL REFERENCES boxes(module_id),
        kind TEXT NOT NULL CHECK (kind IN ('REVOKE', 'SET_ISSUER')),
        body TEXT NOT NULL,
        operation TEXT NOT NULL,
        purpose TEXT NOT NULL CHECK (purpose IN ('revoke', 'set_access', 'rotate_install', 'rotate_drop')),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        smart_key_id INTEGER REFERENCES smart_keys(id),
        requested_by TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        replays INTEGER NOT NULL DEFAULT 0,
        control_seq INTEGER,
        in_flight_until INTEGER,
        next_attempt_at INTEGER NOT NULL,
        last_status TEXT,
        last_error TEXT,
        last_attempt_at INTEGER,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        UNIQUE (operation, module_id)
      );
      CREATE INDEX control_commands_pending ON control_commands(module_id, id) WHERE state = 'pending';
      CREATE INDEX control_commands_sequence ON control_commands(module_id, control_seq);

      -- When an operator revoked the key (ms); its open route refuses it and
      -- its box logs no longer move its session.
      ALTER TABLE smart_keys ADD COLUMN revoked_at INTEGER;
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
