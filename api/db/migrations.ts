// Schema migrations, in code, applied in order at start. Adding a migration is
// adding one entry at the end of MIGRATIONS; never edit an applied one.
import type Database from 'better-sqlite3';
import { DatabaseRefusedError } from './refused.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** The migration rebuilds a table others refer to (SQLite cannot drop a
   * NOT NULL): it runs with foreign keys off, as SQLite's documented
   * procedure says, and `foreign_key_check` must find nothing before it
   * commits. */
  rebuildsTables?: true;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'client apps, drivers, tokens, parkings, boxes, demo',
    sql: `
      CREATE TABLE client_apps (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        client_app_id TEXT NOT NULL UNIQUE,
        client_secret_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );

      -- Car drivers. Emails are stored trimmed and lowercased.
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        first_name TEXT NOT NULL,
        last_name TEXT NOT NULL,
        phone TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );

      -- One row per access + refresh pair; only SHA-256 hashes are kept.
      -- Rotation and revocation set revoked_at on the whole pair.
      CREATE TABLE tokens (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        client_app_id INTEGER NOT NULL REFERENCES client_apps(id),
        access_token_hash BLOB NOT NULL UNIQUE,
        refresh_token_hash BLOB NOT NULL UNIQUE,
        access_expires_at INTEGER NOT NULL,
        refresh_expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE INDEX tokens_user ON tokens(user_id);

      CREATE TABLE secured_parkings (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        currency TEXT NOT NULL CHECK (length(currency) = 3),
        price_per_hour_minor INTEGER NOT NULL CHECK (price_per_hour_minor >= 0),
        max_duration_minutes INTEGER NOT NULL CHECK (max_duration_minutes > 0),
        tries INTEGER NOT NULL CHECK (tries BETWEEN 1 AND 255),
        is_online INTEGER NOT NULL DEFAULT 0,
        is_active INTEGER NOT NULL DEFAULT 1,
        parking_key TEXT NOT NULL,
        parking_key_next TEXT,
        forwarding_url TEXT,
        forwarding_expose INTEGER NOT NULL DEFAULT 0,
        forwarding_secret TEXT,
        created_at INTEGER NOT NULL
      );

      CREATE TABLE boxes (
        id INTEGER PRIMARY KEY,
        module_id INTEGER NOT NULL UNIQUE CHECK (module_id BETWEEN 0 AND 4294967295),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        direction TEXT NOT NULL CHECK (direction IN ('entrance', 'exit')),
        mac_address TEXT NOT NULL UNIQUE,
        box_key TEXT NOT NULL,
        mqtt_username TEXT NOT NULL UNIQUE,
        mqtt_password_hash TEXT NOT NULL,
        skew_seconds INTEGER NOT NULL DEFAULT 120,
        min_battery_mv INTEGER NOT NULL DEFAULT 3300,
        next_control_seq INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX boxes_parking ON boxes(parking_id);

      -- Demo data of \`parkbench admin demo\`: its client secret and driver
      -- password are kept in clear on purpose so later runs can print them
      -- again. Only demo credentials live here.
      CREATE TABLE demo (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        client_app_row_id INTEGER NOT NULL REFERENCES client_apps(id),
        client_secret TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        driver_password TEXT NOT NULL,
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id)
      );
    `,
  },
  {
    version: 2,
    name: 'MQTT accounts of gateways and operators',
    sql: `
      -- Boxes keep their MQTT account in boxes; these are the other clients
      -- of the broker. Passwords are stored in mosquitto's $7$ format.
      CREATE TABLE mqtt_clients (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('gateway', 'operator')),
        username TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'parking sessions, smart keys, payments',
    sql: `
      -- Times in ms since the epoch (whole seconds for session windows, so
      -- the API and the ACCESS frame agree); money in integer minor units.
      CREATE TABLE parking_sessions (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        state TEXT NOT NULL CHECK (state IN ('entering', 'active', 'exiting', 'finished')),
        start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL,
        entrance_remaining_tries INTEGER NOT NULL,
        exit_remaining_tries INTEGER NOT NULL,
        -- What is due: the whole window at creation, the final amount once
        -- ended (finalize or a verified exit).
        amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
        currency TEXT NOT NULL,
        ended_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX parking_sessions_user ON parking_sessions(user_id);
      -- One open session per driver, whichever process creates it.
      CREATE UNIQUE INDEX parking_sessions_one_open ON parking_sessions(user_id) WHERE state <> 'finished';

      -- Smart keys: access_command is kept so GET returns the same bytes;
      -- module_ids (JSON array) are the modules the command lists.
      CREATE TABLE smart_keys (
        id INTEGER PRIMARY KEY CHECK (id BETWEEN 1 AND 4294967295),
        user_id INTEGER NOT NULL REFERENCES users(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        session_id INTEGER REFERENCES parking_sessions(id),
        type TEXT NOT NULL,
        description TEXT,
        purpose TEXT NOT NULL CHECK (purpose IN ('session', 'exit')),
        access_command BLOB NOT NULL,
        module_ids TEXT NOT NULL,
        start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX smart_keys_user ON smart_keys(user_id);
      CREATE INDEX smart_keys_session ON smart_keys(session_id);

      -- Payments at a provider (the sandbox for now); token is the
      -- unguessable part of pay_url.
      CREATE TABLE payments (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES parking_sessions(id),
        provider TEXT NOT NULL,
        token TEXT NOT NULL UNIQUE,
        purpose TEXT NOT NULL CHECK (purpose IN ('session', 'overstay')),
        amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
        currency TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'paid', 'declined')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX payments_session ON payments(session_id);
    `,
  },
  {
    version: 4,
    name: 'box logs, what boxes tell, forwarding outbox',
    sql: `
      -- Box logs as sent (spec 2.1), plus what verification found. Over HTTP
      -- fo_user_id is the token's user; from MQTT it may be null (a control
      -- command has no driver), and so may smart_key_id (a key minted by a
      -- test tool is no smart key of the service).
      CREATE TABLE box_logs (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL CHECK (source IN ('http', 'mqtt')),
        fo_user_id INTEGER REFERENCES users(id),
        smart_key_id INTEGER REFERENCES smart_keys(id),
        equipment_id INTEGER NOT NULL,
        secured_parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        type TEXT NOT NULL CHECK (type IN ('in', 'out', 'control')),
        command TEXT,
        command_decrypted TEXT,
        response TEXT,
        response_decrypted TEXT,
        offline INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        latitude REAL,
        longitude REAL,
        verified INTEGER NOT NULL,
        -- From the verified response only.
        box_seq INTEGER,
        status INTEGER,
        received_at INTEGER NOT NULL
      );
      -- A verified response is stored once; unverified logs never collide.
      CREATE UNIQUE INDEX box_logs_verified_seq ON box_logs(equipment_id, box_seq) WHERE verified = 1;
      CREATE INDEX box_logs_parking ON box_logs(secured_parking_id);

      -- What the service learns from verified responses (PROTOCOL.md).
      ALTER TABLE boxes ADD COLUMN last_seen_at INTEGER;
      ALTER TABLE boxes ADD COLUMN last_box_seq INTEGER;
      ALTER TABLE boxes ADD COLUMN last_box_time INTEGER;
      ALTER TABLE boxes ADD COLUMN box_time_drift_seconds INTEGER;
      ALTER TABLE boxes ADD COLUMN battery_mv INTEGER;
      ALTER TABLE boxes ADD COLUMN last_control_seq INTEGER;

      -- Forwarding (spec 6): one row per box log to deliver, written in the
      -- box log's transaction; grouped into deliveries of up to 100 records
      -- for one URL. A delivery keeps its id (X-Parkbench-Delivery) and its
      -- records across retries, so a receiver can deduplicate.
      CREATE TABLE forwarding_deliveries (
        id TEXT PRIMARY KEY,
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        url TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        oldest_record_at INTEGER NOT NULL,
        last_attempt_at INTEGER,
        last_error TEXT,
        delivered_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX forwarding_deliveries_due ON forwarding_deliveries(state, next_attempt_at);
      CREATE TABLE forwarding_outbox (
        id INTEGER PRIMARY KEY,
        box_log_id INTEGER NOT NULL REFERENCES box_logs(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        url TEXT NOT NULL,
        delivery_id TEXT REFERENCES forwarding_deliveries(id),
        created_at INTEGER NOT NULL
      );
      CREATE INDEX forwarding_outbox_waiting ON forwarding_outbox(url, id) WHERE delivery_id IS NULL;
      CREATE INDEX forwarding_outbox_delivery ON forwarding_outbox(delivery_id);
    `,
  },
  {
    version: 5,
    name: 'no index of box logs by parking',
    sql: `
      -- No query reads box logs by parking and nothing deletes a parking (the
      -- foreign key check would want it then): the index only cost every
      -- insert, 5 to 10% of box log ingestion (perf:api).
      DROP INDEX box_logs_parking;
    `,
  },
  {
    version: 6,
    name: 'forwarding of unverified box logs is chosen per parking',
    sql: `
      -- Off by default: a log whose response is not verified may be invented
      -- by whoever posted it, so it reaches a third party only when the
      -- operator asks for it (issue 12, item 5).
      ALTER TABLE secured_parkings ADD COLUMN forwarding_unverified INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 7,
    name: 'token families',
    sql: `
      -- A token family: a login's first pair and every pair rotated from it
      -- share family_id (the first pair's id). A rotated refresh token used
      -- again revokes the whole family (RFC 9700 4.14.2). Pairs issued before
      -- this migration do not know their parent: each is a family of its own.
      ALTER TABLE tokens ADD COLUMN family_id INTEGER;
      UPDATE tokens SET family_id = id;
      CREATE INDEX tokens_family ON tokens(family_id);
    `,
  },
  {
    version: 8,
    name: 'access modes of parkings: sealed or signed by an issuer key pair',
    rebuildsTables: true,
    sql: `
      -- Protocol version 2 (docs/protocol.md, Keys): a parking's access
      -- commands are sealed under K_park (version 1 firmware) or signed by
      -- the parking's issuer key pair. parking_key becomes nullable (a signed
      -- parking's boxes hold none), hence the rebuild. Keys in hex: private
      -- keys are the P-256 scalar (64 digits) and never leave the database;
      -- public keys are X || Y (128 digits).
      --   issuer_private_key / issuer_public_key: the pair smart keys are
      --     signed with now;
      --   issuer_previous_public_key: the key boxes keep as
      --     issuer_key_previous after a rotation, until no key it signed is
      --     valid any more;
      --   issuer_next_private_key / issuer_next_public_key: a pair being
      --     installed on the boxes (SET_ISSUER) that signs nothing yet.
      CREATE TABLE secured_parkings_v8 (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        currency TEXT NOT NULL CHECK (length(currency) = 3),
        price_per_hour_minor INTEGER NOT NULL CHECK (price_per_hour_minor >= 0),
        max_duration_minutes INTEGER NOT NULL CHECK (max_duration_minutes > 0),
        tries INTEGER NOT NULL CHECK (tries BETWEEN 1 AND 255),
        is_online INTEGER NOT NULL DEFAULT 0,
        is_active INTEGER NOT NULL DEFAULT 1,
        access_mode TEXT NOT NULL CHECK (access_mode IN ('sealed', 'signed')),
        parking_key TEXT,
        parking_key_next TEXT,
        issuer_private_key TEXT,
        issuer_public_key TEXT,
        issuer_previous_public_key TEXT,
        issuer_next_private_key TEXT,
        issuer_next_public_key TEXT,
        forwarding_url TEXT,
        forwarding_expose INTEGER NOT NULL DEFAULT 0,
        forwarding_secret TEXT,
        forwarding_unverified INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        CHECK (access_mode = 'signed' OR parking_key IS NOT NULL),
        CHECK (access_mode = 'sealed' OR (issuer_private_key IS NOT NULL AND issuer_public_key IS NOT NULL)),
        CHECK ((issuer_private_key IS NULL) = (issuer_public_key IS NULL)),
        CHECK ((issuer_next_private_key IS NULL) = (issuer_next_public_key IS NULL))
      );
      INSERT INTO secured_parkings_v8 (id, name, description, currency, price_per_hour_minor, max_duration_minutes, tries,
        is_online, is_active, access_mode, parking_key, parking_key_next, forwarding_url, forwarding_expose,
        forwarding_secret, forwarding_unverified, created_at)
      SELECT id, name, description, currency, price_per_hour_minor, max_duration_minutes, tries,
        is_online, is_active, 'sealed', parking_key, parking_key_next, forwarding_url, forwarding_expose,
        forwarding_secret, forwarding_unverified, created_at
      FROM secured_parkings;
      DROP TABLE secured_parkings;
      ALTER TABLE secured_parkings_v8 RENAME TO secured_parkings;

      -- The issuer public key that signed a smart key's ACCESS_SIGNED (null
      -- for a sealed ACCESS): a rotation drops the previous key from the
      -- boxes once no key it signed is still valid.
      ALTER TABLE smart_keys ADD COLUMN signed_by TEXT;
    `,
  },
  {
    version: 9,
    name: 'durable control commands (REVOKE, SET_ISSUER) per box; revoked smart keys',
    sql: `
      -- Control commands the service owes its boxes (docs/protocol.md,
      -- REVOKE and SET_ISSUER), delivered by the API's dispatcher
      -- (api/control/) per box in id order, one in flight per box. The body
      -- is JSON (REVOKE {"entries":[{"key_id","until"}]}, SET_ISSUER
      -- {"issuer_key","issuer_key_previous"} in hex): the frame is sealed at
      -- send time under K_box with a fresh control sequence, control_seq.
      --   operation: the deliveries of one operator request share it (a
      --     parking switches once all of them are done);
      --   purpose: revoke, set_access, rotate_install or rotate_drop;
      --   requested_by: what asked for it (the admin command);
      --   in_flight_until: a dispatcher sent it and waits for the answer
      --     until then (ms); another process leaves it alone meanwhile;
      --   replays: REPLAY answers met (the sequence skipped ahead each time).
      CREATE TABLE control_commands (
        id INTEGER PRIMARY KEY,
        module_id INTEGER NOT NULL REFERENCES boxes(module_id),
        kind TEXT NOT NULL CHECK (kind IN ('REVOKE', 'SET_ISSUER')),
        body TEXT NOT NULL,
        operation TEXT NOT NULL,
        purpose TEXT NOT NULL CHECK (purpose IN ('revoke', 'set_access', 'rotate_install', 'rotate_drop')),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        smart_key_id INTEGER REFERENCES smart_keys(id),
        requested_by TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
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
        UNIQUE (operation, module_id)
      );
      CREATE INDEX control_commands_pending ON control_commands(module_id, id) WHERE state = 'pending';
      CREATE INDEX control_commands_sequence ON control_commands(module_id, control_seq);

      -- When an operator revoked the key (ms); its open route refuses it and
      -- its box logs no longer move its session.
      ALTER TABLE smart_keys ADD COLUMN revoked_at INTEGER;
    `,
  },
  {
    version: 10,
    name: 'Standard Webhooks forwarding: secret rotation, endpoints disabled by 410 Gone',
    sql: `
      -- Forwarding follows Standard Webhooks 1.0 (api/forwarding/). A
      -- rotation keeps the secret it replaces signing too (webhook-signature
      -- carries both) until forwarding_previous_secret_until (ms). Secrets
      -- stored before this migration have no whsec_ prefix and keep signing
      -- with the same bytes (api/forwarding/signature.ts, secretKey).
      ALTER TABLE secured_parkings ADD COLUMN forwarding_previous_secret TEXT;
      ALTER TABLE secured_parkings ADD COLUMN forwarding_previous_secret_until INTEGER;

      -- A receiver that answered 410 Gone: its deliveries wait, nothing is
      -- sent to that URL until the operator revives it (admin forwarding retry).
      CREATE TABLE forwarding_disabled_urls (
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        url TEXT NOT NULL,
        disabled_at INTEGER NOT NULL,
        reason TEXT NOT NULL,
        PRIMARY KEY (parking_id, url)
      );
    `,
  },
  {
    version: 11,
    name: 'operator accounts for the operator HTTP API',
    sql: `
      -- Operators of /api/operator/... (api/operators/): a name and the
      -- SHA-256 of a 256-bit random bearer token, shown once. Removing an
      -- operator deletes the row: its token is refused on the next request.
      CREATE TABLE operators (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash BLOB NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 12,
    name: 'true availability of boxes: derived from the box and its gateway',
    sql: `
      -- What the API derived about each box from MQTT (api/mqtt/box-availability.ts):
      -- its own retained availability and, behind a gateway, the gateway's.
      -- Written by the API process on every change, read by admin box status
      -- and the operator API in any process. No foreign key: a message may
      -- name a box this database does not hold.
      CREATE TABLE box_availability (
        module_id INTEGER PRIMARY KEY,
        availability TEXT NOT NULL CHECK (availability IN ('online', 'offline', 'unknown')),
        reason TEXT,
        since INTEGER,
        gateway_id TEXT,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 13,
    name: 'single-use tickets of the operator event stream',
    sql: `
      -- A browser's EventSource cannot send Authorization: it gets a ticket
      -- (POST /api/operator/events/tickets, api/events/tickets.ts) good for ONE
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
  },
  {
    version: 14,
    name: 'operator smart keys: a one-off ACCESS an operator sends a box',
    rebuildsTables: true,
    sql: `
      -- POST /api/operator/boxes/:module_id/commands {"command": "access"}
      -- (api/operators/operator-access.ts) mints a smart key of purpose
      -- operator: no driver (user_id null) and no session, the operator in
      -- operator_id (null once that operator is removed; the description
      -- keeps the name). user_id becomes nullable, hence the rebuild.
      CREATE TABLE smart_keys_v13 (
        id INTEGER PRIMARY KEY CHECK (id BETWEEN 1 AND 4294967295),
        user_id INTEGER REFERENCES users(id),
        parking_id INTEGER NOT NULL REFERENCES secured_parkings(id),
        session_id INTEGER REFERENCES parking_sessions(id),
        operator_id INTEGER REFERENCES operators(id) ON DELETE SET NULL,
        type TEXT NOT NULL,
        description TEXT,
        purpose TEXT NOT NULL CHECK (purpose IN ('session', 'exit', 'operator')),
        access_command BLOB NOT NULL,
        module_ids TEXT NOT NULL,
        start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        signed_by TEXT,
        revoked_at INTEGER,
        -- A driver's key has a driver; an operator's has none and no session.
        CHECK ((purpose = 'operator') = (user_id IS NULL)),
        CHECK (purpose <> 'operator' OR session_id IS NULL)
      );
      INSERT INTO smart_keys_v13 (id, user_id, parking_id, session_id, operator_id, type, description, purpose,
        access_command, module_ids, start_time, end_time, created_at, signed_by, revoked_at)
      SELECT id, user_id, parking_id, session_id, NULL, type, description, purpose,
        access_command, module_ids, start_time, end_time, created_at, signed_by, revoked_at
      FROM smart_keys;
      DROP TABLE smart_keys;
      ALTER TABLE smart_keys_v13 RENAME TO smart_keys;
      CREATE INDEX smart_keys_user ON smart_keys(user_id);
      CREATE INDEX smart_keys_session ON smart_keys(session_id);
      CREATE INDEX smart_keys_operator ON smart_keys(operator_id);
    `,
  },
  {
    version: 15,
    name: 'failed logins and logins in flight, shared by every API process',
    sql: `
      -- The failed-login limiter (api/auth/login-limiter.ts) keeps its counts
      -- here so that every API process on this database shares them (issue
      -- 18): one row per attempt and scope, the username (trimmed and
      -- lowercased) or the client address. An attempt is in flight from
      -- before its password is hashed until its verdict: a failure keeps its
      -- rows as failed, a success or an error deletes them. abandoned_at
      -- bounds an attempt whose process died in flight: past it the row no
      -- longer counts. Rows that no longer count are pruned by the limiter.
      CREATE TABLE login_attempts (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL CHECK (scope IN ('username', 'address')),
        key TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_flight', 'failed')),
        abandoned_at INTEGER NOT NULL
      );
      CREATE INDEX login_attempts_key ON login_attempts (scope, key, started_at);
      CREATE INDEX login_attempts_started ON login_attempts (started_at);
    `,
  },
  {
    version: 16,
    name: 'parking sessions by start time, for the sessions of the day',
    sql: `
      -- The event stream's snapshot reads the newest sessions of the day and
      -- counts them (api/operators/views.ts, operatorSessionsOfDay), whatever
      -- the table holds: today's through a range of the first index, the
      -- open ones of earlier days through a range of the second (the query
      -- writes state <> 'finished' as this literal, so both engines see that
      -- the partial index applies).
      CREATE INDEX parking_sessions_start ON parking_sessions (start_time, id);
      CREATE INDEX parking_sessions_open_start ON parking_sessions (start_time, id) WHERE state <> 'finished';
    `,
  },
  {
    version: 17,
    name: 'session creations per driver, shared by every API process',
    sql: `
      -- The token bucket of each driver's session creations
      -- (api/sessions/create-limit.ts): full_at is when the bucket is full
      -- again, SESSION_CREATE_BURST tokens; one row per driver who created a
      -- session, written in the creation's own transaction, so every API
      -- process on this database shares it.
      CREATE TABLE session_create_limits (
        user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        full_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 18,
    name: 'control answers bound to the frame sent; skipped deliveries; boxes held by a conformance run; rotations that re-sign; MQTT messages stored once',
    rebuildsTables: true,
    sql: `
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
  },
  {
    version: 19,
    name: 'boxes marked simulated or real',
    sql: `
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
  },
  {
    version: 20,
    name: 'the revocations a box could not take, found without reading every control command',
    sql: `
      -- The REVOKEs that failed or were skipped, per box: what every read of
      -- the boxes at risk (GET /api/operator/parkings, the bench page's
      -- snapshot, admin box status) looks for, however long the history of
      -- delivered commands grows. The read names these values as literals
      -- so that SQLite's planner can use the partial index.
      CREATE INDEX control_commands_unsettled_revokes ON control_commands(module_id)
        WHERE purpose = 'revoke' AND state IN ('failed', 'skipped');
    `,
  },
];

/**
 * Refuses a database parkbench must not touch, before anything writes to it:
 * another program's (tables, and no `migrations` table: parkbench's tables
 * are not added to it) and one from a newer parkbench (a migration this code
 * does not know: its schema may not be what this code reads and writes).
 * Returns the versions applied (none for an empty database).
 */
export function checkSchema(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  where: string = db.name,
): number[] {
  const tables = (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((row) => row.name);
  if (!tables.includes('migrations')) {
    if (tables.length === 0) return [];
    const shown = tables.length > 5 ? `${tables.slice(0, 5).join(', ')}, ...` : tables.join(', ');
    throw new DatabaseRefusedError(
      `${where} is not a parkbench database (tables ${shown} and no migrations table): parkbench will not add its tables to it; give another --database or DATABASE_PATH`,
    );
  }
  const applied = (db.prepare('SELECT version FROM migrations ORDER BY version').all() as { version: number }[]).map(
    (row) => row.version,
  );
  const known = new Set(migrations.map((migration) => migration.version));
  const unknown = applied.filter((version) => !known.has(version));
  if (unknown.length > 0) {
    throw new DatabaseRefusedError(
      `${where} is at migration ${Math.max(...applied)}, which this parkbench does not know (it knows migrations up to ${latestVersion(migrations)}): use the parkbench that wrote it, or a newer one`,
    );
  }
  return applied;
}

/** For a database opened read-only: refused as by checkSchema, and also when
 * it lacks a migration (it cannot be migrated without writing). */
export function checkSchemaCurrent(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  where: string = db.name,
): void {
  const applied = new Set(checkSchema(db, migrations, where));
  if (applied.size === 0) throw new DatabaseRefusedError(`${where} holds no parkbench database (it is empty)`);
  if (migrations.every((migration) => applied.has(migration.version))) return;
  throw new DatabaseRefusedError(
    `${where} is at migration ${Math.max(...applied)}; this parkbench needs migration ${latestVersion(migrations)}: a command that writes (or parkbench api) migrates it, a read-only one does not`,
  );
}

function latestVersion(migrations: readonly Migration[]): number {
  return Math.max(0, ...migrations.map((migration) => migration.version));
}

/** Applies the migrations not yet applied, each in its own transaction, after
 * checkSchema. Each transaction begins IMMEDIATE (the write lock first) and
 * reads whether its migration is applied inside it: two processes starting
 * together on one file (two APIs, the API and an admin command) apply each
 * migration once, the second waiting on the busy timeout for the first's
 * commit and then finding it applied. Read before the transaction, both saw
 * it missing and the second failed ("table ... already exists"). */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number {
  checkSchema(db, migrations);
  db.exec(`CREATE TABLE IF NOT EXISTS migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  )`);
  const isApplied = db.prepare<[number]>('SELECT 1 FROM migrations WHERE version = ?').pluck();
  const record = db.prepare('INSERT INTO migrations (version, name) VALUES (?, ?)');
  const applyOnce = (migration: Migration, apply: () => void): boolean =>
    db
      .transaction(() => {
        if (isApplied.get(migration.version) !== undefined) return false;
        apply();
        record.run(migration.version, migration.name);
        return true;
      })
      .immediate();
  let count = 0;
  for (const migration of migrations) {
    const applied = migration.rebuildsTables
      ? runRebuild(db, migration, (apply) => applyOnce(migration, apply))
      : applyOnce(migration, () => db.exec(migration.sql));
    if (applied) count += 1;
  }
  return count;
}

/** SQLite's procedure for a table rebuild (https://www.sqlite.org/lang_altertable.html,
 * "Making Other Kinds Of Table Schema Changes"): foreign keys off outside the
 * transaction (the pragma is a no-op inside one), the change, a
 * foreign_key_check that must come back empty, commit, foreign keys back on. */
function runRebuild(
  db: Database.Database,
  migration: Migration,
  inTransaction: (apply: () => void) => boolean,
): boolean {
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    return inTransaction(() => {
      db.exec(migration.sql);
      const broken = db.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0)
        throw new Error(
          `migration ${migration.version} (${migration.name}) would leave ${broken.length} broken foreign key(s); nothing was changed`,
        );
    });
  } finally {
    if (foreignKeys) db.pragma('foreign_keys = ON');
  }
}
