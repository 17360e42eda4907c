// What every `parkbench admin` subcommand shares: the --database and --json
// flags, the configuration (environment; --database, a SQLite file or a
// postgres:// URL, wins over DATABASE_PATH and DATABASE_URL), the store, and
// printing the result. The store's modules load when a command opens it,
// not when the command line starts.
import type { Command } from 'commander';
import type { ApiConfig } from '../../api/config/index.js';
import type { Store } from '../../api/db/store.js';
import { DatabaseRefusedError } from '../../api/db/refused.js';
import { configFrom } from '../commands/api.js';
import { CliError, ExitCode } from '../errors.js';

export interface CommonFlags {
  database?: string;
  json?: boolean;
}

export interface AdminContext {
  config: ApiConfig;
  store: Store;
  now: number;
}

export function withCommonFlags(command: Command): Command {
  return command
    .option(
      '--database <path or url>',
      'the SQLite file, or a postgres:// URL (default: DATABASE_URL, else DATABASE_PATH or ./data/parkbench.sqlite)',
    )
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
  const { openStore, storeLocation } = await import('../../api/db/open-store.js');
  let store: Store;
  try {
    // An idle pooled connection that fails (the server restarting) is
    // replaced by the pool; the command's next query reports a real failure.
    store = await openStore(config, { readonly, onIdleError: () => undefined, maxConnections: 2 });
  } catch (error) {
    if (error instanceof DatabaseRefusedError) throw new CliError(error.message, ExitCode.usage);
    const message = error instanceof Error ? error.message : String(error);
    // openStore names a PostgreSQL URL (its password masked) already.
    throw new CliError(
      config.databaseUrl === undefined ? `cannot open the database ${storeLocation(config)}: ${message}` : message,
    );
  }
  try {
    return await work({ config, store, now: Date.now() });
  } finally {
    await store.close();
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
