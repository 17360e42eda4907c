// `npm run perf:pg-floor`: PostgreSQL's own bulk insert of box logs, the
// floor that the PostgreSQL figures of perf:api and perf:ingest compare
// against. No parkbench code runs in between: `pg` sends rows of the box_logs
// table itself (BOX_LOGS_TABLE of api/db/migrations/014-operator-smart-keys.ts:
// its columns, CHECKs, foreign keys and the partial unique index on verified (equipment_id, box_seq)) with
// ON CONFLICT DO NOTHING RETURNING id, as storing a verified log needs.
//
// Cases, each a statement per batch, each statement its own transaction:
// - a multi-row INSERT ... VALUES of 50 rows (900 parameters, prepared once
//   per connection), the batch of a POST /api/box_logs;
// - INSERT ... SELECT FROM unnest($1::text[], ...) of 50 rows, and of 500
//   (18 array parameters whatever the batch);
// - COPY is not measured: node-postgres streams COPY FROM STDIN only through
//   the `pg-copy-streams` package, which is not a dependency (and COPY has no
//   ON CONFLICT nor RETURNING, which storing a verified log needs).
//
// On two servers of testkit/postgres-server.ts: the test helper's (fsync,
// synchronous_commit and full_page_writes off), and one as durable as the
// SQLite store (fsync on, synchronous_commit off: a crash of the machine
// loses the last commits, never consistency, as SQLite's WAL with
// synchronous=NORMAL). With 1 client, and with PERF_PG_CLIENTS (default 4)
// connections inserting at once. The rows' contents (sealed responses,
// commands) are made before the clock starts.
//
//   PERF_SECONDS (default 3) per case, PERF_PG_CLIENTS (default 4).
import pg from 'pg';
import { startPostgres, TEST_SETTINGS } from '../testkit/postgres-server.js';
import { formatNumber } from './support/processes.js';
import {
  DURABLE_AS_SQLITE,
  FLOOR_SCHEMA,
  measure,
  rowsLike,
  unnestCase,
  valuesCase,
  type Figure,
} from './support/pg-floor-cases.js';

const SECONDS = Number(process.env.PERF_SECONDS ?? 3);
const CLIENTS = Number(process.env.PERF_PG_CLIENTS ?? 4);

const SERVERS: { name: string; settings: Record<string, string> }[] = [
  { name: 'test server (fsync off)', settings: { ...TEST_SETTINGS } },
  { name: 'durable as SQLite WAL NORMAL (fsync on, synchronous_commit off)', settings: { ...DURABLE_AS_SQLITE } },
];
const CASES = [valuesCase(50), unnestCase(50), unnestCase(500)];
const templates = new Map([50, 500].map((rows) => [rows, rowsLike(rows)]));

console.log(
  `PostgreSQL bulk insert of box logs (the floor of the PostgreSQL store), ${SECONDS} s a case, 2-core machine; COPY not measured (needs pg-copy-streams)\n`,
);
const figures: Figure[] = [];
for (const server of SERVERS) {
  const postgres = await startPostgres({ settings: server.settings });
  const pool = new pg.Pool({ connectionString: postgres.url, max: CLIENTS });
  // An idle connection told of the server's shutdown at the end is no failure.
  pool.on('error', () => undefined);
  try {
    await pool.query(FLOOR_SCHEMA);
    for (const clients of [1, CLIENTS])
      for (const kase of CASES) {
        const template = templates.get(kase.rows);
        if (template === undefined) throw new Error(`no rows of ${kase.rows}`);
        figures.push({ ...(await measure(pool, clients, kase, template, SECONDS)), server: server.name });
      }
  } finally {
    await pool.end();
    await postgres.stop();
  }
}

const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
console.log(line(['server', 'clients', 'case', 'rows/s', 'ms a statement', 'vs VALUES 50']));
console.log(line(['---', '---:', '---', '---:', '---:', '---:']));
for (const figure of figures) {
  const base = figures.find(
    (other) => other.server === figure.server && other.clients === figure.clients && other.case === CASES[0]?.name,
  );
  console.log(
    line([
      figure.server,
      String(figure.clients),
      figure.case,
      formatNumber(figure.rowsPerSecond),
      formatNumber(figure.statementMs, 2),
      base === undefined ? '' : formatNumber(figure.rowsPerSecond / base.rowsPerSecond, 2),
    ]),
  );
}
process.exit(0);
