// Version 5 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 5,
  name: 'no index of box logs by parking',
  sqlite: `
      -- No query reads box logs by parking and nothing deletes a parking (the
      -- foreign key check would want it then): the index only cost every
      -- insert, 5 to 10% of box log ingestion (bench:api).
      DROP INDEX box_logs_parking;
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
