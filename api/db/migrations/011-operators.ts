// Version 11 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 11,
  name: 'operator accounts for the operator HTTP API',
  sqlite: `
      -- Operators of /api/operator/... (api/operators/): a name and the
      -- SHA-256 of a 256-bit random bearer token, shown once. Removing an
      -- operator deletes the row: its token is refused on the next request.
      CREATE TABLE operators (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash BLOB NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
      );
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
