// PostgreSQL's own bulk insert of box logs, the floor the PostgreSQL figures
// compare against (perf:pg-floor, and perf:api / perf:ingest on
// PostgreSQL in the same run): `pg` sends rows of the box_logs table itself
// (BOX_LOGS_TABLE of api/db/migrations/014-operator-smart-keys.ts: its
// columns, CHECKs, foreign keys and the partial unique index on verified
// (equipment_id, box_seq)) with ON CONFLICT DO NOTHING RETURNING id, as storing a verified log needs.
// No parkbench code runs in between.
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { randomKeyHex } from '../../api/auth/secrets.js';
import { BOX_LOGS_TABLE } from '../../api/db/migrations/index.js';
import { boxLogBatch } from './box-log-batches.js';

/** A server as durable as the SQLite store: a crash of the machine loses
 * the last commits, never consistency (SQLite's WAL with synchronous=NORMAL). */
export const DURABLE_AS_SQLITE: Readonly<Record<string, string>> = {
  fsync: 'on',
  synchronous_commit: 'off',
  full_page_writes: 'on',
};

export const FLOOR_SCHEMA = `
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

export type Row = (string | number | null)[];

/** Rows as the API stores a POST's verified logs, from the API benchmark's own bodies. */
export function rowsLike(count: number): Row[] {
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

export interface Case {
  name: string;
  rows: number;
  /** One statement inserting `rows` rows whose box_seq start at `firstSeq`. */
  insert(client: pg.PoolClient, template: Row[], firstSeq: number): Promise<number>;
}

const onConflict = 'ON CONFLICT DO NOTHING RETURNING id';

export function valuesCase(rows: number): Case {
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

export function unnestCase(rows: number): Case {
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

export interface Figure {
  server: string;
  clients: number;
  case: string;
  rowsPerSecond: number;
  statementMs: number;
}

let nextSeq = 1;

/** Rows stored per second by `clients` connections running `kase` for `seconds`, on a database with FLOOR_SCHEMA. */
export async function measure(
  pool: pg.Pool,
  clients: number,
  kase: Case,
  template: Row[],
  seconds: number,
): Promise<Figure> {
  await pool.query('TRUNCATE box_logs');
  const connections = await Promise.all(Array.from({ length: clients }, () => pool.connect()));
  try {
    // One statement each first: prepared, and the connection warm.
    for (const client of connections) await kase.insert(client, template, (nextSeq += kase.rows) - kase.rows);
    let stored = 0;
    let statements = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
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
    const elapsed = (performance.now() - start) / 1000;
    return {
      server: '',
      clients,
      case: kase.name,
      rowsPerSecond: stored / elapsed,
      statementMs: (elapsed * 1000 * clients) / statements,
    };
  } finally {
    for (const client of connections) client.release();
  }
}
