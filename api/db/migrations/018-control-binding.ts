// Version 18 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 18,
  name: 'control answers bound to the frame sent; skipped deliveries; boxes held by a conformance run; rotations that re-sign; MQTT messages stored once',
  rebuildsTables: true,
  sqlite: `
      -- sent_nonce: the nonce (24 hex digits) of the frame the dispatcher
      -- sent last for the command; only an answer whose AAD carries it
      -- settles the command (docs/protocol.md, What an answer proves).
      -- purpose 'restore': a conformance run's put-back of the issuer keys
      -- the service says the box holds, queued before the run touches them
      -- (nothing to do on the parking once done). state 'skipped': an
      -- operator gave up on the delivery (admin control skip); its operation
      -- goes on without it. The CHECKs change, hence the rebuild.
      CREATE TABLE control_commands_v18 (
        id INTEGER PRIMARY KEY,
        module_id INTEGER NOT NULL REFERENCES boxes(module_id),
        kind TEXT NOT NULL CHECK (kind IN ('REVOKE', 'SET_ISSUER')),
        body TEXT NOT NULL,
        operation TEXT NOT NULL,
        purpose TEXT NOT NULL CHECK (purpose IN ('revoke', 'set_access', 'rotate_install', 'rotate_drop', 'restore')),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        smart_key_id INTEGER REFERENCES smart_keys(id),
        requested_by TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed', 'skipped')),
        attempts INTEGER NOT NULL DEFAULT 0,
        replays INTEGER NOT NULL DEFAULT 0,
        control_seq INTEGER,
        in_flight_until INTEGER,
        next_attempt_at INTEGER NOT NULL,
        last_status TEXT,
        last_error TEXT,
        last_attempt_at INTEGER,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        sent_nonce TEXT,
        UNIQUE (operation, module_id)
      );
      INSERT INTO control_commands_v18 (id, module_id, kind, body, operation, purpose, parking_id, smart_key_id,
        requested_by, state, attempts, replays, control_seq, in_flight_until, next_attempt_at, last_status,
        last_error, last_attempt_at, created_at, finished_at)
      SELECT id, module_id, kind, body, operation, purpose, parking_id, smart_key_id, requested_by, state,
        attempts, replays, control_seq, in_flight_until, next_attempt_at, last_status, last_error,
        last_attempt_at, created_at, finished_at
      FROM control_commands;
      DROP TABLE control_commands;
      ALTER TABLE control_commands_v18 RENAME TO control_commands;
      CREATE INDEX control_commands_pending ON control_commands(module_id, id) WHERE state = 'pending';
      CREATE INDEX control_commands_sequence ON control_commands(module_id, control_seq);

      -- A box held by a conformance run (any API process): the control
      -- dispatcher and the operator's control commands send it nothing
      -- while held_until (ms) is in the future, so the run's block of
      -- control sequences stays the box's only one. The run renews its
      -- lease while it lasts and deletes the row when it ends; a process
      -- that dies leaves a lease that passes.
      CREATE TABLE box_holds (
        module_id INTEGER PRIMARY KEY REFERENCES boxes(module_id),
        holder TEXT NOT NULL,
        held_until INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );

      -- A rotation started with --re-sign: once the service signs with the
      -- new key, the live smart keys signed by the previous one are signed
      -- again with the new one, so the previous key leaves the boxes as soon
      -- as that is done, and with it every signature of a revoked key.
      ALTER TABLE secured_parkings ADD COLUMN issuer_re_sign INTEGER NOT NULL DEFAULT 0;

      -- An unverified box log from MQTT is stored once per message: the
      -- SHA-256 of its box and payload (a redelivery after a reconnect or a
      -- crash is the same bytes); a verified one is deduplicated by its
      -- box_seq already, so it carries none.
      ALTER TABLE box_logs ADD COLUMN message_digest TEXT;
      CREATE UNIQUE INDEX box_logs_message_digest ON box_logs(message_digest) WHERE message_digest IS NOT NULL;
    `,
  // PostgreSQL changes the CHECK in place.
  postgres: `
ALTER TABLE control_commands ADD COLUMN sent_nonce text;
ALTER TABLE control_commands DROP CONSTRAINT control_commands_purpose_check;
ALTER TABLE control_commands ADD CONSTRAINT control_commands_purpose_check
  CHECK (purpose IN ('revoke', 'set_access', 'rotate_install', 'rotate_drop', 'restore'));
ALTER TABLE control_commands DROP CONSTRAINT control_commands_state_check;
ALTER TABLE control_commands ADD CONSTRAINT control_commands_state_check
  CHECK (state IN ('pending', 'done', 'failed', 'skipped'));
CREATE TABLE box_holds (
  module_id bigint PRIMARY KEY REFERENCES boxes(module_id),
  holder text NOT NULL,
  held_until bigint NOT NULL,
  created_at bigint NOT NULL
);
ALTER TABLE secured_parkings ADD COLUMN issuer_re_sign integer NOT NULL DEFAULT 0;
ALTER TABLE box_logs ADD COLUMN message_digest text;
CREATE UNIQUE INDEX box_logs_message_digest ON box_logs(message_digest) WHERE message_digest IS NOT NULL;
`,
};

export default migration;
