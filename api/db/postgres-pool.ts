// The pg pool of the PostgreSQL store.
// pg returns int8 (bigint) columns as strings, since they may exceed 2^53;
// ours never do (ids, times in ms, sequences), and the SQLite path returns
// numbers, so this pool parses them to Number, and refuses one that would
// lose digits rather than return it wrong. The parser is the pool's own
// (pg's `types` option), not pg's global one: nothing else in the process
// changes.
import pg from 'pg';
import type { PostgresUrl } from '../config/index.js';

const INT8_OID = 20;

/** pg's parsers for every other type, as it would pick them. */
const builtInParser = pg.types.getTypeParser.bind(pg.types) as (
  oid: number,
  format?: 'text' | 'binary',
) => (value: string) => unknown;

export interface PostgresPoolOptions {
  /** Connections at most (pg's default 10). */
  max?: number;
  /** Called with an idle connection's error (the server went away): pg
   * emits it as the pool's 'error' event, which would crash the process
   * unheard. The connection is dropped either way; the next query reconnects. */
  onIdleError: (error: Error) => void;
}

export function createPostgresPool(url: PostgresUrl, { max = 10, onIdleError }: PostgresPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    host: url.host,
    port: url.port,
    database: url.database,
    user: url.user,
    password: url.password,
    ssl: url.ssl === 'disable' ? false : { rejectUnauthorized: url.ssl === 'verify-full' },
    max,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID && format !== 'binary'
          ? parseInt8
          : builtInParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on('error', onIdleError);
  return pool;
}

export function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new RangeError(`the bigint ${text} is beyond 2^53 and would lose digits as a JavaScript number`);
  return value;
}
