// Version 17 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 17,
  name: 'session creations per driver, shared by every API process',
  sqlite: `
      -- The token bucket of each driver's session creations
      -- (api/sessions/create-limit.ts): full_at is when the bucket is full
      -- again, SESSION_CREATE_BURST tokens; one row per driver who created a
      -- session, written in the creation's own transaction, so every API
      -- process on this database shares it.
      CREATE TABLE session_create_limits (
        user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        full_at INTEGER NOT NULL
      );
    `,
  postgres: `
CREATE TABLE session_create_limits (
  user_id bigint PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  full_at bigint NOT NULL
);
`,
};

export default migration;
