// Version 23 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 23,
  name: 'reservations of a box, held and queued',
  sqlite: `
      -- A box taken by an operator (parkbench reserve, POST
      -- /api/operator/boxes/:module_id/reservation), or waiting for it in a
      -- first-come queue (the order of id). A held one lasts until
      -- expires_at (ms), renewed by its holder; a waiting one until
      -- expires_at too, which its waiting request moves forward while it is
      -- connected, so a waiter that died leaves the queue. The token is kept
      -- as its SHA-256 only.
      CREATE TABLE box_reservations (
        id INTEGER PRIMARY KEY,
        module_id INTEGER NOT NULL REFERENCES boxes(module_id),
        token_hash TEXT NOT NULL UNIQUE,
        operator_id INTEGER NOT NULL REFERENCES operators(id),
        holder TEXT NOT NULL,
        note TEXT,
        state TEXT NOT NULL CHECK (state IN ('held', 'waiting')),
        ttl_ms INTEGER NOT NULL,
        queued_at INTEGER NOT NULL,
        held_since INTEGER,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX box_reservations_by_box ON box_reservations(module_id, state, id);
    `,
  postgres: `
CREATE TABLE box_reservations (
  id bigserial PRIMARY KEY,
  module_id bigint NOT NULL REFERENCES boxes(module_id),
  token_hash text NOT NULL UNIQUE,
  operator_id bigint NOT NULL REFERENCES operators(id),
  holder text NOT NULL,
  note text,
  state text NOT NULL CHECK (state IN ('held', 'waiting')),
  ttl_ms bigint NOT NULL,
  queued_at bigint NOT NULL,
  held_since bigint,
  expires_at bigint NOT NULL
);
CREATE INDEX box_reservations_by_box ON box_reservations(module_id, state, id);
`,
};

export default migration;
