// Version 19 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 19,
  name: 'boxes marked simulated or real',
  sqlite: `
      -- simulated: 1 for a box parkbench's simulator plays (the demo's, a
      -- fleet's, one added with admin box add --simulated), 0 for hardware.
      -- parkbench start simulates the demo parking's simulated boxes only.
      -- The boxes already there are simulated when parkbench made them: the
      -- demo's in the demo parking (their MACs 02:50:42:..., api/demo/ensure.ts)
      -- and a fleet's (02:46:..., api/boxes/fleet.ts); every other box was
      -- added by an operator with a MAC of its own, so it is real.
      ALTER TABLE boxes ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0;
      UPDATE boxes SET simulated = 1
        WHERE (mac_address LIKE '02:50:42:%' AND parking_id IN (SELECT parking_id FROM demo))
          OR mac_address LIKE '02:46:%';
    `,
  postgres: `
ALTER TABLE boxes ADD COLUMN simulated integer NOT NULL DEFAULT 0;
UPDATE boxes SET simulated = 1
  WHERE (mac_address LIKE '02:50:42:%' AND parking_id IN (SELECT parking_id FROM demo))
    OR mac_address LIKE '02:46:%';
`,
};

export default migration;
