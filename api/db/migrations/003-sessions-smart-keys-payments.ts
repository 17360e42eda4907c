// Version 3 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 3,
  name: 'parking sessions, smart keys, payments',
  sqlite: `
      -- Times in ms since the epoch (whole seconds for session windows, so
      -- the API and the ACCESS frame agree); money in integer minor units.
      CREATE TABLE parking_sessions (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        state TEXT NOT NULL CHECK (state IN ('entering', 'active', 'exiting', 'finished')),
        start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL,
        entrance_remaining_tries INTEGER NOT NULL,
        exit_remaining_tries INTEGER NOT NULL,
        -- What is due: the whole window at creation, the final amount once
        -- ended (finalize or a verified exit).
        amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
        currency TEXT NOT NULL,
        ended_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX parking_sessions_user ON parking_sessions(user_id);
      -- One open session per driver, whichever process creates it.
      CREATE UNIQUE INDEX parking_sessions_one_open ON parking_sessions(user_id) WHERE state <> 'finished';

      -- Smart keys: access_command is kept so GET returns the same bytes;
      -- module_ids (JSON array) are the modules the command lists.
      CREATE TABLE smart_keys (
        id INTEGER PRIMARY KEY CHECK (id BETWEEN 1 AND 4294967295),
        user_id INTEGER NOT NULL REFERENCES users(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        session_id INTEGER REFERENCES parking_sessions(id),
        type TEXT NOT NULL,
        description TEXT,
        purpose TEXT NOT NULL CHECK (purpose IN ('session', 'exit')),
        access_command BLOB NOT NULL,
        module_ids TEXT NOT NULL,
        start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX smart_keys_user ON smart_keys(user_id);
      CREATE INDEX smart_keys_session ON smart_keys(session_id);

      -- Payments at a provider (the sandbox); token is the unguessable part
      -- of pay_url.
      CREATE TABLE payments (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES parking_sessions(id),
        provider TEXT NOT NULL,
        token TEXT NOT NULL UNIQUE,
        purpose TEXT NOT NULL CHECK (purpose IN ('session', 'overstay')),
        amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
        currency TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'paid', 'declined')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX payments_session ON payments(session_id);
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
