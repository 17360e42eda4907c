// Version 22 of the schema, for both engines (api/db/migrations/migration.ts).
import type { Migration } from './migration.js';

const migration: Migration = {
  version: 22,
  name: 'conformance and soak runs kept, with their results and labels',
  sqlite: `
      -- A run of the conformance suite or of a soak against one box, from the
      -- bench page, the operator API or the command line (api/runs/). Times
      -- are ms on the service's clock; options, summary and report are JSON
      -- as the run's kind writes them.
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        module_id INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('conformance', 'soak')),
        source TEXT NOT NULL CHECK (source IN ('page', 'api', 'cli', 'ci')),
        started_by TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'passed', 'failed', 'error')),
        target TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        error TEXT,
        options TEXT NOT NULL,
        summary TEXT,
        report TEXT,
        captures TEXT NOT NULL DEFAULT '[]',
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX runs_by_box ON runs(module_id, started_at, id);
      CREATE INDEX runs_by_start ON runs(started_at, id);

      -- A case of a conformance run or a limit of a soak, in the order it ended.
      CREATE TABLE run_results (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        result TEXT NOT NULL CHECK (result IN ('pass', 'fail', 'skip')),
        reason TEXT,
        ms REAL NOT NULL,
        value REAL,
        details TEXT NOT NULL,
        PRIMARY KEY (run_id, position)
      );
      CREATE INDEX run_results_by_name ON run_results(name, run_id);

      -- Labels of a run (firmware, hardware, ci_job_url, ...), one row each.
      CREATE TABLE run_labels (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
      );
      CREATE INDEX run_labels_by_value ON run_labels(name, value);
    `,
  postgres: `
CREATE TABLE runs (
  id text PRIMARY KEY,
  module_id bigint NOT NULL,
  kind text NOT NULL CHECK (kind IN ('conformance', 'soak')),
  source text NOT NULL CHECK (source IN ('page', 'api', 'cli', 'ci')),
  started_by text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'passed', 'failed', 'error')),
  target text NOT NULL,
  started_at bigint NOT NULL,
  ended_at bigint,
  error text,
  options text NOT NULL,
  summary text,
  report text,
  captures text NOT NULL DEFAULT '[]',
  updated_at bigint NOT NULL
);
CREATE INDEX runs_by_box ON runs(module_id, started_at, id);
CREATE INDEX runs_by_start ON runs(started_at, id);
CREATE TABLE run_results (
  run_id text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position integer NOT NULL,
  name text NOT NULL,
  result text NOT NULL CHECK (result IN ('pass', 'fail', 'skip')),
  reason text,
  ms double precision NOT NULL,
  value double precision,
  details text NOT NULL,
  PRIMARY KEY (run_id, position)
);
CREATE INDEX run_results_by_name ON run_results(name, run_id);
CREATE TABLE run_labels (
  run_id text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (run_id, name)
);
CREATE INDEX run_labels_by_value ON run_labels(name, value);
`,
};

export default migration;
