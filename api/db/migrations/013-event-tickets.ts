// Version 13 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 13,
  name: 'single-use tickets of the operator event stream',
  sqlite: `
      -- A browser's EventSource cannot send Authorization: it gets a ticket
      -- (POST /api/operator/events/tickets, api/operators/stream/tickets.ts) good for ONE
      -- GET /api/operator/events within 30 s. Only its SHA-256 is kept, so
      -- any API process on this database honours it and a leaked database
      -- row opens nothing. used_at is set by the one UPDATE that takes it.
      CREATE TABLE event_tickets (
        id INTEGER PRIMARY KEY,
        ticket_hash BLOB NOT NULL UNIQUE,
        operator_id INTEGER NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE INDEX event_tickets_expiry ON event_tickets (expires_at);
      `,
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
