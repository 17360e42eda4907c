// What every `parkbench admin` subcommand shares: the --database and --json
// flags, the configuration (environment; --database wins over
// DATABASE_PATH), the database, and printing the result.
import type { Command } from 'commander';
import type { ApiConfig } from '../../api/config.js';
import { openDatabase, type Db } from '../../api/db/open.js';
import { DatabaseRefusedError } from '../../api/db/refused.js';
import { configFrom } from '../commands/api.js';
import { CliError, ExitCode } from '../errors.js';

export interface CommonFlags {
  database?: string;
  json?: boolean;
}

export interface AdminContext {
  config: ApiConfig;
  db: Db;
  now: number;
}

export function withCommonFlags(command: Command): Command {
  return command
    .option('--database <path>', 'the SQLite file (default: DATABASE_PATH or ./data/parkbench.sqlite)')
    .option('--json', 'print the result as JSON');
}

/** Runs `work` on an open database and closes it, whatever happens. The
 * database is created (and migrated) if need be: for commands that write. */
export function withDatabase<T>(flags: CommonFlags, work: (ctx: AdminContext) => T | Promise<T>): Promise<T> {
  return run(flags, false, work);
}

/** Runs `work` on the database opened read-only: never created nor migrated
 * (a missing one is an error), and a file this user may only read works. */
export function withReadOnlyDatabase<T>(flags: CommonFlags, work: (ctx: AdminContext) => T | Promise<T>): Promise<T> {
  return run(flags, true, work);
}

async function run<T>(flags: CommonFlags, readonly: boolean, work: (ctx: AdminContext) => T | Promise<T>): Promise<T> {
  const config = configFrom({ database: flags.database });
  let db: Db;
  try {
    db = openDatabase(config.databasePath, { busyTimeoutMs: config.databaseBusyTimeoutMs, readonly });
  } catch (error) {
    if (error instanceof DatabaseRefusedError) throw new CliError(error.message, ExitCode.usage);
    throw new CliError(
      `cannot open the database ${config.databasePath}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    return await work({ config, db, now: Date.now() });
  } finally {
    db.close();
  }
}

/** Prints a result: JSON with --json (the documented fields first), else
 * "field: value" lines and an optional note for the operator. */
export function printResult(flags: CommonFlags, value: object, note?: string): void {
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const lines: string[] = [];
  const walk = (object: object, indent: string) => {
    for (const [key, field] of Object.entries(object)) {
      if (field !== null && typeof field === 'object') {
        lines.push(`${indent}${key}:`);
        walk(field as object, `${indent}  `);
      } else {
        lines.push(`${indent}${key}: ${String(field)}`);
      }
    }
  };
  walk(value, '');
  if (note) lines.push('', note);
  process.stdout.write(`${lines.join('\n')}\n`);
}
