// Version 7 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 7,
  name: 'token families',
  sqlite: `
      -- A token family: a login's first pair and every pair rotated from it
      -- share family_id (the first pair's id). A rotated refresh token used
      -- again revokes the whole family (RFC 9700 4.14.2). Pairs issued before
      -- this migration do not know their parent: each is a family of its own.
      ALTER TABLE tokens ADD COLUMN family_id INTEGER;
      UPDATE tokens SET family_id = id;
      CREATE INDEX tokens_family ON tokens(family_id);
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
