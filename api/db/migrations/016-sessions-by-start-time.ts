// Version 16 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 16,
  name: 'parking sessions by start time, for the sessions of the day',
  sqlite: `
      -- The event stream's snapshot reads the newest sessions of the day and
      -- counts them (api/operators/views.ts, operatorSessionsOfDay), whatever
      -- the table holds: today's through a range of the first index, the
      -- open ones of earlier days through a range of the second (the query
      -- writes state <> 'finished' as this literal, so both engines see that
      -- the partial index applies).
      CREATE INDEX parking_sessions_start ON parking_sessions (start_time, id);
      CREATE INDEX parking_sessions_open_start ON parking_sessions (start_time, id) WHERE state <> 'finished';
    `,
  postgres: `
CREATE INDEX parking_sessions_start ON parking_sessions(start_time, id);
CREATE INDEX parking_sessions_open_start ON parking_sessions(start_time, id) WHERE state <> 'finished';
`,
};

export default migration;
