// `npm run perf:store-driver`: what Kysely costs the SQLite path (perf:api
// and perf:ingest may drop by no more than 10% for it). Box logs as the API
// stores a POST's batch: 50 verified rows a transaction, one INSERT ... ON
// CONFLICT DO NOTHING a row, on a WAL file opened and migrated as the API opens
// it (api/db/open.ts: synchronous NORMAL, foreign keys on, the real box_logs
// table with its partial unique index), through:
//
// - better-sqlite3 alone, one prepared statement in a synchronous
//   BEGIN IMMEDIATE transaction: the baseline, as api/box-logs/repository.ts
//   and api/db/group-commit-sqlite.ts do;
// - Kysely with our driver (api/db/kysely-sqlite.ts: statement cache,
//   BEGIN IMMEDIATE), each row a query built, compiled and awaited;
// - Kysely with its own SqliteDialect (a prepare per execution, a deferred BEGIN);
// - Kysely with our driver, the INSERT built and compiled once and run with
//   each row's parameters (Kysely's executor alone, without its builder);
// - Kysely with our driver, the 50 rows as one multi-row INSERT (what a
//   dialect branch could do; not what the API does).
// - and, to tell the async change from Kysely's own cost, better-sqlite3
//   with an await after each row.
//
// The cases take turns, ROUNDS rounds of PERF_SECONDS each, and each round's
// ratio is against the baseline of the same round (the machine is shared).
//
//   PERF_SECONDS (default 2) per case and round, PERF_ROUNDS (default 3).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, type Insertable } from 'kysely';
import { BetterSqliteDialect } from '../api/db/kysely-sqlite.js';
import { openDatabase } from '../api/db/open.js';
import type { BoxLogsTable, Schema } from '../api/db/schema.js';
import { formatNumber } from './support/processes.js';

const SECONDS = Number(process.env.PERF_SECONDS ?? 2);
const ROUNDS = Number(process.env.PERF_ROUNDS ?? 3);
const BATCH = 50;

/** A box log as the benchmark inserts it: every column but the id and the MQTT message digest. */
type BoxLogRow = Required<Omit<Insertable<BoxLogsTable>, 'id' | 'message_digest'>>;

const folder = mkdtempSync(join(tmpdir(), 'parkbench-bench-store-'));
const path = join(folder, 'bench.sqlite');
const raw = openDatabase(path);
const now = Date.now();
// What the rows refer to (foreign keys on, as in the API): a driver, a parking, a smart key.
raw.exec(`
  INSERT INTO users (id, email, password_hash, first_name, last_name, phone, created_at)
    VALUES (1, 'bench@example.test', 'x', 'B', 'Ench', '+33100000000', ${now});
  INSERT INTO secured_parkings (id, name, currency, price_per_hour_minor, max_duration_minutes, tries, access_mode, parking_key, created_at)
    VALUES (1, 'bench', 'EUR', 100, 60, 3, 'sealed', '${'00'.repeat(16)}', ${now});
  INSERT INTO smart_keys (id, user_id, parking_id, type, purpose, access_command, module_ids, start_time, end_time, created_at)
    VALUES (1, 1, 1, 'session', 'session', x'00', '[1001]', ${now}, ${now + 3_600_000}, ${now});
`);

// The contents of a verified log over HTTP (sizes as perf:api's bodies: a
// 48-byte command and a sealed response, in base64), made before any clock.
const command = Buffer.alloc(48, 7).toString('base64');
const response = Buffer.alloc(40, 9).toString('base64');
let nextSeq = 1;
function batch(): BoxLogRow[] {
  return Array.from({ length: BATCH }, () => ({
    source: 'http',
    fo_user_id: 1,
    smart_key_id: 1,
    equipment_id: 1001,
    secured_parking_id: 1,
    type: 'in',
    command,
    command_decrypted: 'ACCESS key 1',
    response,
    response_decrypted: 'OK',
    offline: 0,
    created_at: '2026-06-01 08:00:00',
    latitude: 48.8566,
    longitude: 2.3522,
    verified: 1,
    box_seq: nextSeq++,
    status: 0,
    received_at: now,
  }));
}

const columns = Object.keys(batch()[0] ?? {}) as (keyof BoxLogRow)[];
// Positional parameters, as api/box-logs/repository.ts binds them.
const insertRow = raw.prepare(
  `INSERT INTO box_logs (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`,
);
const insertBatch = raw.transaction((rows: BoxLogRow[]) => {
  let stored = 0;
  for (const row of rows) stored += insertRow.run(columns.map((name) => row[name])).changes;
  return stored;
});

const ours = new Kysely<Schema>({ dialect: new BetterSqliteDialect({ database: raw }) });
// Kysely's own driver on a second connection to the file (it would close the first on destroy).
const theirsConnection = new Database(path);
theirsConnection.pragma('busy_timeout = 5000');
theirsConnection.pragma('foreign_keys = ON');
theirsConnection.pragma('synchronous = NORMAL');
const theirs = new Kysely<Schema>({ dialect: new SqliteDialect({ database: theirsConnection }) });

const compiledInsert = ours
  .insertInto('box_logs')
  .values(batch()[0] as BoxLogRow)
  .onConflict((conflict) => conflict.doNothing())
  .compile();

async function rowByRow(db: Kysely<Schema>, rows: BoxLogRow[]): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let stored = 0;
    for (const row of rows) {
      const result = await trx
        .insertInto('box_logs')
        .values(row)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      stored += Number(result.numInsertedOrUpdatedRows ?? 0n);
    }
    return stored;
  });
}

interface Case {
  name: string;
  /** Stores one batch; resolves with the rows stored. */
  store(rows: BoxLogRow[]): number | Promise<number>;
}

const CASES: Case[] = [
  {
    name: 'better-sqlite3, one prepared statement, BEGIN IMMEDIATE (baseline)',
    store: (rows) => insertBatch.immediate(rows),
  },
  {
    name: 'better-sqlite3, the same with an await after each row (the async change alone)',
    store: async (rows) => {
      raw.exec('BEGIN IMMEDIATE');
      try {
        let stored = 0;
        for (const row of rows) {
          stored += insertRow.run(columns.map((name) => row[name])).changes;
          await Promise.resolve();
        }
        raw.exec('COMMIT');
        return stored;
      } catch (error) {
        raw.exec('ROLLBACK');
        throw error;
      }
    },
  },
  { name: 'Kysely + our driver (statement cache, BEGIN IMMEDIATE)', store: (rows) => rowByRow(ours, rows) },
  { name: 'Kysely + its SqliteDialect (prepare per execution, BEGIN)', store: (rows) => rowByRow(theirs, rows) },
  {
    name: 'Kysely + our driver, the INSERT compiled once, run with each row (no build nor compile a row)',
    store: (rows) =>
      ours.transaction().execute(async (trx) => {
        let stored = 0;
        for (const row of rows) {
          const result = await trx.executeQuery(
            CompiledQuery.raw(
              compiledInsert.sql,
              columns.map((name) => row[name]),
            ),
          );
          stored += Number(result.numAffectedRows ?? 0n);
        }
        return stored;
      }),
  },
  {
    name: 'Kysely + our driver, the 50 rows as one multi-row INSERT',
    store: async (rows) => {
      const result = await ours.transaction().execute((trx) =>
        trx
          .insertInto('box_logs')
          .values(rows)
          .onConflict((conflict) => conflict.doNothing())
          .executeTakeFirst(),
      );
      return Number(result.numInsertedOrUpdatedRows ?? 0n);
    },
  },
];

async function measure(kase: Case): Promise<number> {
  // Batches made ahead, so the clock sees only the store.
  const batches = Array.from({ length: 2_000 }, batch);
  await kase.store(batch()); // warm: statements prepared, code compiled
  let stored = 0;
  let used = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  while (performance.now() < end) {
    const rows = batches[used++] ?? batch();
    const inserted = await kase.store(rows);
    if (inserted !== BATCH) throw new Error(`${kase.name}: ${inserted} of ${BATCH} rows stored`);
    stored += inserted;
  }
  return stored / ((performance.now() - start) / 1000);
}

console.log(
  `SQLite box-log inserts, ${BATCH} rows a transaction, ${ROUNDS} rounds of ${SECONDS} s a case, 2-core machine (shared)\n`,
);
const figures = CASES.map(() => [] as { rowsPerSecond: number; ratio: number }[]);
for (let round = 0; round < ROUNDS; round++) {
  const rates: number[] = [];
  for (const kase of CASES) rates.push(await measure(kase));
  const base = rates[0] ?? Number.NaN;
  rates.forEach((rate, index) => figures[index]?.push({ rowsPerSecond: rate, ratio: rate / base }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
console.log(
  line(['case', 'rows/s (each round)', 'vs baseline (each round)', 'median ratio', 'µs a row over baseline (median)']),
);
console.log(line(['---', '---:', '---:', '---:', '---:']));
CASES.forEach((kase, index) => {
  const rounds = figures[index] ?? [];
  console.log(
    line([
      kase.name,
      rounds.map((figure) => formatNumber(figure.rowsPerSecond)).join(' / '),
      rounds.map((figure) => formatNumber(figure.ratio, 2)).join(' / '),
      formatNumber(median(rounds.map((figure) => figure.ratio)), 2),
      formatNumber(
        median(
          rounds.map(
            (figure, round) => 1e6 / figure.rowsPerSecond - 1e6 / (figures[0]?.[round]?.rowsPerSecond ?? Number.NaN),
          ),
        ),
        1,
      ),
    ]),
  );
});
await ours.destroy();
await theirs.destroy();
raw.close();
rmSync(folder, { recursive: true, force: true });
