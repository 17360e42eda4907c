// Version 6 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 6,
  name: 'forwarding of unverified box logs is chosen per parking',
  sqlite: `
      -- Off by default: a log whose response is not verified may be invented
      -- by whoever posted it, so it reaches a third party only when the
      -- operator asks for it.
      ALTER TABLE secured_parkings ADD COLUMN forwarding_unverified INTEGER NOT NULL DEFAULT 0;
    `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
