// `npm run bench:pg-floor`: PostgreSQL's own bulk insert of box logs, the
// floor that issue 18's figures (bench:api and bench:ingest on PostgreSQL)
// compare against. No parkbench code runs in between: `pg` sends rows of the
// box_logs table itself (api/db/postgres-baseline.ts BOX_LOGS_TABLE: its columns, CHECKs, foreign
// keys and the partial unique index on verified (equipment_id, box_seq)) with
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
// On two servers of lib/postgres-server.ts: the test helper's (fsync,
// synchronous_commit and full_page_writes off), and one as durable as the
// SQLite store (fsync on, synchronous_commit off: a crash of the machine
// loses the last commits, never consistency, as SQLite's WAL with
// synchronous=NORMAL). With 1 client, and with BENCH_PG_CLIENTS (default 4)
// connections inserting at once. The rows' contents (sealed responses,
// commands) are made before the clock starts.
//
//   BENCH_SECONDS (default 3) per case, BENCH_PG_CLIENTS (default 4).
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { randomKeyHex } from '../api/auth/secrets.js';
import { BOX_LOGS_TABLE } from '../api/db/postgres-baseline.js';
import { startPostgres, TEST_SETTINGS } from '../lib/postgres-server.js';
import { boxLogBatch } from './support/box-log-batches.js';
import { formatNumber } from './support/processes.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CLIENTS = Number(process.env.BENCH_PG_CLIENTS ?? 4);

const SCHEMA = `
  CREATE TABLE users (id bigint PRIMARY KEY);
  CREATE TABLE smart_keys (id bigint PRIMARY KEY);
  CREATE TABLE secured_parkings (id bigint PRIMARY KEY);
  ${BOX_LOGS_TABLE}
  INSERT INTO users VALUES (1);
  INSERT INTO smart_keys VALUES (1);
  INSERT INTO secured_parkings VALUES (1);
`;

const COLUMNS = [
  ['source', 'text'],
  ['fo_user_id', 'bigint'],
  ['smart_key_id', 'bigint'],
  ['equipment_id', 'bigint'],
  ['secured_parking_id', 'bigint'],
  ['type', 'text'],
  ['command', 'text'],
  ['command_decrypted', 'text'],
  ['response', 'text'],
  ['response_decrypted', 'text'],
  ['offline', 'integer'],
  ['created_at', 'text'],
  ['latitude', 'double precision'],
  ['longitude', 'double precision'],
  ['verified', 'integer'],
  ['box_seq', 'bigint'],
  ['status', 'integer'],
  ['received_at', 'bigint'],
] as const;
const COLUMN_LIST = COLUMNS.map(([name]) => name).join(', ');
const BOX_SEQ = COLUMNS.findIndex(([name]) => name === 'box_seq');

type Row = (string | number | null)[];

/** Rows as the API stores a POST's verified logs, from the API benchmark's own bodies. */
function rowsLike(count: number): Row[] {
  const body = JSON.parse(
    boxLogBatch(
      {
        userId: 1,
        keyId: 1,
        command: Buffer.alloc(48, 7).toString('base64'),
        parkingId: 1,
        moduleId: 1001,
        boxKey: randomKeyHex(),
      },
      count,
    ),
  ) as { box_logs: { box_log: Record<string, unknown> }[] };
  const now = Date.now();
  return body.box_logs.map(({ box_log: log }) => {
    const point = log.point_attributes as { latitude: number; longitude: number };
    return [
      'http',
      log.fo_user_id as number,
      log.smart_key_id as number,
      log.equipment_id as number,
      log.secured_parking_id as number,
      log.type as string,
      log.command as string,
      log.command_decrypted as string,
      log.response as string,
      log.response_decrypted as string,
      0,
      log.created_at as string,
      point.latitude,
      point.longitude,
      1,
      0, // box_seq: set per insert, every verified log is new
      0,
      now,
    ];
  });
}

interface Case {
  name: string;
  rows: number;
  /** One statement inserting `rows` rows whose box_seq start at `firstSeq`. */
  insert(client: pg.PoolClient, template: Row[], firstSeq: number): Promise<number>;
}

const onConflict = 'ON CONFLICT DO NOTHING RETURNING id';

function valuesCase(rows: number): Case {
  const tuples = Array.from(
    { length: rows },
    (_, row) => `(${COLUMNS.map((__, column) => `$${row * COLUMNS.length + column + 1}`).join(', ')})`,
  );
  const text = `INSERT INTO box_logs (${COLUMN_LIST}) VALUES ${tuples.join(', ')} ${onConflict}`;
  return {
    name: `INSERT ... VALUES, ${rows} rows a statement`,
    rows,
    insert: async (client, template, firstSeq) => {
      const values: Row = [];
      template.forEach((row, index) => {
        for (let column = 0; column < row.length; column += 1)
          values.push(column === BOX_SEQ ? firstSeq + index : (row[column] ?? null));
      });
      const result = await client.query({ name: `values-${rows}`, text, values });
      return result.rowCount ?? 0;
    },
  };
}

function unnestCase(rows: number): Case {
  const arrays = COLUMNS.map(([, type], column) => `$${column + 1}::${type}[]`).join(', ');
  const text = `INSERT INTO box_logs (${COLUMN_LIST}) SELECT * FROM unnest(${arrays}) ${onConflict}`;
  return {
    name: `INSERT ... SELECT FROM unnest, ${rows} rows a statement`,
    rows,
    insert: async (client, template, firstSeq) => {
      const values = COLUMNS.map((_, column) =>
        template.map((row, index) => (column === BOX_SEQ ? firstSeq + index : (row[column] ?? null))),
      );
      const result = await client.query({ name: `unnest-${rows}`, text, values });
      return result.rowCount ?? 0;
    },
  };
}

interface Figure {
  server: string;
  clients: number;
  case: string;
  rowsPerSecond: number;
  statementMs: number;
}

let nextSeq = 1;

async function measure(pool: pg.Pool, clients: number, kase: Case, template: Row[]): Promise<Figure> {
  await pool.query('TRUNCATE box_logs');
  const connections = await Promise.all(Array.from({ length: clients }, () => pool.connect()));
  try {
    // One statement each first: prepared, and the connection warm.
    for (const client of connections) await kase.insert(client, template, (nextSeq += kase.rows) - kase.rows);
    let stored = 0;
    let statements = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    await Promise.all(
      connections.map(async (client) => {
        while (performance.now() < end) {
          const firstSeq = nextSeq;
          nextSeq += kase.rows;
          const inserted = await kase.insert(client, template, firstSeq);
          if (inserted !== kase.rows) throw new Error(`${kase.name}: ${inserted} of ${kase.rows} rows stored`);
          stored += inserted;
          statements += 1;
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    return {
      server: '',
      clients,
      case: kase.name,
      rowsPerSecond: stored / seconds,
      statementMs: (seconds * 1000 * clients) / statements,
    };
  } finally {
    for (const client of connections) client.release();
  }
}

const SERVERS: { name: string; settings: Record<string, string> }[] = [
  { name: 'test server (fsync off)', settings: { ...TEST_SETTINGS } },
  {
    name: 'durable as SQLite WAL NORMAL (fsync on, synchronous_commit off)',
    settings: { fsync: 'on', synchronous_commit: 'off', full_page_writes: 'on' },
  },
];
const CASES = [valuesCase(50), unnestCase(50), unnestCase(500)];
const templates = new Map([50, 500].map((rows) => [rows, rowsLike(rows)]));

console.log(
  `PostgreSQL bulk insert of box logs (the floor of issue 18), ${SECONDS} s a case, 2-core machine; COPY not measured (needs pg-copy-streams)\n`,
);
const figures: Figure[] = [];
for (const server of SERVERS) {
  const postgres = await startPostgres({ settings: server.settings });
  const pool = new pg.Pool({ connectionString: postgres.url, max: CLIENTS });
  // An idle connection told of the server's shutdown at the end is no failure.
  pool.on('error', () => undefined);
  try {
    await pool.query(SCHEMA);
    for (const clients of [1, CLIENTS])
      for (const kase of CASES) {
        const template = templates.get(kase.rows);
        if (template === undefined) throw new Error(`no rows of ${kase.rows}`);
        figures.push({ ...(await measure(pool, clients, kase, template)), server: server.name });
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
