// Version 8 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 8,
  name: 'access modes of parkings: sealed or signed by an issuer key pair',
  rebuildsTables: true,
  sqlite: `
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
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
