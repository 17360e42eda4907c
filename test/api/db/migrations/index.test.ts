// The list of schema versions (api/db/migrations/index.ts) against the
// folder: each file 0NN-what.ts is listed, as version NN, in order, and the
// list holds nothing else; PostgreSQL's baseline is the first version with a
// PostgreSQL step, and every version after it has one.
import { readdirSync } from 'node:fs';
import test from 'ava';
import { MIGRATIONS, POSTGRES_BASELINE_VERSION, type Migration } from '../../../../api/db/migrations/index.js';

const folder = new URL('../../../../api/db/migrations/', import.meta.url);

test('every file of api/db/migrations/ is listed as the version its name says, and nothing else is', async (t) => {
  const files = readdirSync(folder)
    .filter((name) => /^\d{3}-.+\.ts$/.test(name))
    .sort();
  t.is(files.length, MIGRATIONS.length);
  for (const [index, file] of files.entries()) {
    const { default: migration } = (await import(new URL(file, folder).href)) as { default: Migration };
    t.is(migration.version, Number(file.slice(0, 3)), file);
    t.is(MIGRATIONS[index], migration, `${file} listed at its place`);
  }
});

test("PostgreSQL's baseline is the first version with a PostgreSQL step; every later version has one", (t) => {
  t.is(MIGRATIONS.find((migration) => migration.postgres !== null)?.version, POSTGRES_BASELINE_VERSION);
  t.deepEqual(
    MIGRATIONS.filter((migration) => migration.version > POSTGRES_BASELINE_VERSION && migration.postgres === null),
    [],
  );
});
