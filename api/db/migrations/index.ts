// Every version of the schema, in order: the list both engines migrate
// through (api/db/migrate-sqlite.ts, api/db/migrate-postgres.ts).
// PostgreSQL's baseline is the first version with a PostgreSQL step; every
// version after it has one too (api/db/migrate-postgres.ts checks it at load).
import type { Migration } from './migration.js';
import v001 from './001-client-apps-drivers-tokens-parkings-boxes-demo.js';
import v002 from './002-mqtt-clients.js';
import v003 from './003-sessions-smart-keys-payments.js';
import v004 from './004-box-logs-forwarding.js';
import v005 from './005-no-box-logs-parking-index.js';
import v006 from './006-forwarding-unverified.js';
import v007 from './007-token-families.js';
import v008 from './008-access-modes.js';
import v009 from './009-control-commands.js';
import v010 from './010-standard-webhooks.js';
import v011 from './011-operators.js';
import v012 from './012-box-availability.js';
import v013 from './013-event-tickets.js';
import v014 from './014-operator-smart-keys.js';
import v015 from './015-login-attempts.js';
import v016 from './016-sessions-by-start-time.js';
import v017 from './017-session-create-limits.js';
import v018 from './018-control-binding.js';
import v019 from './019-simulated-boxes.js';
import v020 from './020-unsettled-revokes.js';
import v021 from './021-smart-key-id-sequence.js';
import v022 from './022-runs.js';
import v023 from './023-reservations.js';

export type { Migration } from './migration.js';
export { BOX_LOGS_TABLE } from './014-operator-smart-keys.js';

export const MIGRATIONS: readonly Migration[] = [
  v001,
  v002,
  v003,
  v004,
  v005,
  v006,
  v007,
  v008,
  v009,
  v010,
  v011,
  v012,
  v013,
  v014,
  v015,
  v016,
  v017,
  v018,
  v019,
  v020,
  v021,
  v022,
  v023,
];

/** The version whose PostgreSQL step is the baseline: the whole schema at that version. */
export const POSTGRES_BASELINE_VERSION = baselineVersion(MIGRATIONS);

function baselineVersion(migrations: readonly Migration[]): number {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1)
      throw new Error(`migration ${migration.name} is version ${migration.version}, listed as ${index + 1}`);
  });
  const baseline = migrations.find((migration) => migration.postgres !== null);
  if (baseline === undefined) throw new Error('no migration has a PostgreSQL step');
  return baseline.version;
}
