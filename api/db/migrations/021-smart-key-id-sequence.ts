// Version 21 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 21,
  name: 'smart key ids from a sequence on PostgreSQL',
  sqlite: `
      -- Nothing on SQLite: its one writer takes the next id after the
      -- largest (api/repositories/smart-keys.ts).
    `,
  // The ids of new keys (api/repositories/smart-keys.ts): concurrent
  // creations take distinct ids without waiting for each other's commits.
  // The 32-bit key ids of the ACCESS frames, after the largest id stored.
  postgres: `
CREATE SEQUENCE smart_key_ids AS bigint MINVALUE 1 MAXVALUE 4294967295;
SELECT setval('smart_key_ids', coalesce(max(id), 0) + 1, false) FROM smart_keys;
`,
};

export default migration;
