// One version of the schema, for both engines: its file
// (api/db/migrations/0NN-what.ts) is the only place that version is written.
// Adding a version is adding a file after the last one and listing it in
// index.ts; a version applied anywhere is never edited (a database records
// the versions it has, not what they did).

export interface Migration {
  version: number;
  /** Recorded beside the version in the database's migrations table. */
  name: string;
  /** SQLite's statements, run in one IMMEDIATE transaction (api/db/migrate-sqlite.ts). */
  sqlite: string;
  /** SQLite: the statements rebuild a table others refer to (SQLite cannot
   * drop a NOT NULL): they run with foreign keys off, as SQLite's documented
   * procedure says, and `foreign_key_check` must find nothing before the
   * transaction commits. */
  rebuildsTables?: true;
  /** PostgreSQL's statements, run in one transaction (api/db/migrate-postgres.ts).
   * null for the versions before PostgreSQL's baseline: the baseline's own
   * statements make every table of the versions up to it at once. */
  postgres: string | null;
}
