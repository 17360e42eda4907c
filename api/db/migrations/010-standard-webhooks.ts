// Version 10 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 10,
  name: 'Standard Webhooks forwarding: secret rotation, endpoints disabled by 410 Gone',
  sqlite: `
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
  // Before PostgreSQL's baseline: version 14 (014-operator-smart-keys.ts)
  // makes every table of the versions up to it at once.
  postgres: null,
};

export default migration;
