// Version 20 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 20,
  name: 'the revocations a box could not take, found without reading every control command',
  sqlite: `
      -- The REVOKEs that failed or were skipped, per box: what every read of
      -- the boxes at risk (GET /api/operator/parkings, the bench page's
      -- snapshot, admin box status) looks for, however long the history of
      -- delivered commands grows. The read names these values as literals
      -- so that SQLite's planner can use the partial index.
      CREATE INDEX control_commands_unsettled_revokes ON control_commands(module_id)
        WHERE purpose = 'revoke' AND state IN ('failed', 'skipped');
    `,
  postgres: `
CREATE INDEX control_commands_unsettled_revokes ON control_commands(module_id)
  WHERE purpose = 'revoke' AND state IN ('failed', 'skipped');
`,
};

export default migration;
