// A throwaway PostgreSQL server for the tests and the benchmarks: Debian's
// `postgresql` package (its binaries only; the cluster the package may have
// created at install is not used), a fresh cluster in a temporary folder,
// listening on a free loopback port and on a unix socket in that folder.
//
// The server refuses to run as root, so under root it runs as the system
// user `parkbench-test` (created on first use with useradd), through runuser.
//
// It is started by a small shell watchdog that reads its stdin, a pipe from
// this process: when this process closes it (stop()) or ends in any way
// (a normal exit, an uncaught exception, SIGKILL from an ava timeout), the
// watchdog sees end of file, stops the server (fast shutdown) and removes the
// folder. No exit hook of ours has to run for the cleanup to happen.
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from '../lib/free-port.js';
import { messageOf } from '../lib/message-of.js';

/** The system user the server runs as when this process is root. */
export const POSTGRES_TEST_USER = 'parkbench-test';

/** Names an existing server for the tests to use instead of starting their own
 * (a superuser or a role with CREATEDB): test/helpers/postgres.ts, scripts/with-postgres.ts. */
export const EXISTING_SERVER_VARIABLE = 'PARKBENCH_TEST_DATABASE_URL';

/** The server's superuser (trust authentication on loopback and the socket: no password). */
export const POSTGRES_SUPERUSER = 'parkbench';

/**
 * The settings of a test server: nothing is written to disk durably, since
 * the cluster is thrown away (a crash of the machine loses nothing of value).
 */
export const TEST_SETTINGS: Readonly<Record<string, string>> = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
};

export interface PostgresServerOptions {
  /** Server settings (`-c name=value`, values without spaces) over `TEST_SETTINGS`. */
  settings?: Readonly<Record<string, string>>;
  /** How long start-up may take, in ms (initdb included). */
  timeoutMs?: number;
  /** Picks the port of each attempt (default: `freePort`). */
  choosePort?: () => Promise<number>;
}

export interface PostgresServer {
  /** postgres://parkbench@127.0.0.1:PORT/postgres */
  readonly url: string;
  readonly port: number;
  /** The temporary folder: the cluster in `data/`, the unix socket, the logs. */
  readonly dir: string;
  /** initdb's and the server's output so far (for a failure's message). */
  log(): string;
  /** Stops the server and removes its folder; resolves when both are done. */
  stop(): Promise<void>;
}

/**
 * The folder of `initdb`, `pg_ctl` and `postgres`: PATH's if all are there, else the
 * newest of Debian's /usr/lib/postgresql/N/bin (the package puts neither on
 * PATH). Undefined when PostgreSQL is not installed.
 */
export function postgresBinDir(path = process.env.PATH ?? '', debian = '/usr/lib/postgresql'): string | undefined {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const hasBoth = (folder: string): boolean =>
    ['initdb', 'pg_ctl', 'postgres'].every((name) => executable(join(folder, name)));
  const onPath = path.split(delimiter).find((folder) => folder !== '' && hasBoth(folder));
  if (onPath !== undefined) return onPath;
  if (!existsSync(debian)) return undefined;
  return readdirSync(debian)
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(debian, version, 'bin'))
    .find(hasBoth);
}

// $1 the folder, $2 the port, $3 the binaries' folder, $4 the server's options
// (-c name=value ...). Runs as the user the server runs as, who owns the folder.
// pg_ctl rather than `postgres &`: a background job of a non-interactive
// shell starts with SIGINT ignored, and SIGINT is PostgreSQL's fast shutdown.
// Stdin is copied to fd 3 first because a background job's stdin is
// /dev/null before any redirection.
const WATCHDOG = `
dir=$1; port=$2; bin=$3; options=$4
exec 3<&0
reader=
stop() {
  if [ -n "$reader" ]; then kill "$reader" 2>/dev/null; fi
  if [ -f "$dir/data/postmaster.pid" ]; then "$bin/pg_ctl" -D "$dir/data" -m fast -w -s stop >/dev/null; fi
  rm -rf "$dir"
}
trap 'stop; exit 0' HUP INT TERM
if ! "$bin/initdb" -D "$dir/data" -U ${POSTGRES_SUPERUSER} --auth=trust --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
  ! "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s -t 60 \\
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $options" start >/dev/null; then
  cat "$dir"/*.log >&2
  stop
  exit 1
fi
echo ready
# Until whoever started us closes our stdin (stop() was called, or it ended),
# waited for in the background so that a signal's trap runs at once.
cat <&3 >/dev/null &
reader=$!
wait "$reader"
reader=
stop
`;

/**
 * The uid and gid of POSTGRES_TEST_USER, creating the user if missing (root
 * only). Test files start together, and two useradd at once can leave a
 * user that flickers (one rolls back what the other saw), so the check and
 * the creation run under one lock (flock, util-linux).
 */
function testUserIds(): { uid: number; gid: number } {
  const user = POSTGRES_TEST_USER;
  const create = `id -u ${user} >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin ${user}`;
  execFileSync('flock', [join(tmpdir(), 'parkbench-test-user.lock'), 'sh', '-c', create], { stdio: 'pipe' });
  const id = (flag: string): number =>
    Number(execFileSync('id', [flag, user], { encoding: 'utf8', stdio: 'pipe' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Starts a fresh PostgreSQL server; resolves once it accepts connections. */
export async function startPostgres(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  // The free port is free when chosen, not necessarily a second later when
  // the server binds it (another test may have taken it): then a new port.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt === 3 || !/could not bind|Address already in use/.test(messageOf(error))) throw error;
    }
  }
}

async function startOnce(options: PostgresServerOptions): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (bin === undefined)
    throw new Error('PostgreSQL is not installed (no initdb and postgres): apt-get install postgresql');
  const settings = { ...TEST_SETTINGS, ...options.settings };
  const port = await (options.choosePort ?? freePort)();
  const dir = mkdtempSync(join(tmpdir(), 'parkbench-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = testUserIds();
    chownSync(dir, uid, gid);
  }
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  const args = ['-c', WATCHDOG, 'watchdog', dir, String(port), bin, serverOptions];
  const child = spawn(asRoot ? 'runuser' : 'sh', asRoot ? ['-u', POSTGRES_TEST_USER, '--', 'sh', ...args] : args, {
    cwd: dir,
    // Its own process group: a signal to ours (Ctrl-C) reaches us, and our end reaches it through the pipe.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const started = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('error', reject);
    void exited.then(() => reject(new Error(`it stopped (exit ${String(child.exitCode ?? child.signalCode)})`)));
  });
  // Neither the watchdog nor its pipes keep this process alive: when it
  // would end, it ends, and the pipe's end stops the server.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref(): void }).unref();

  const log = (): string =>
    [readIfThere(join(dir, 'initdb.log')), readIfThere(join(dir, 'server.log')), output]
      .filter((text) => text !== '')
      .join('\n');
  const stop = async (): Promise<void> => {
    if (child.pid === undefined) return; // nothing was started
    child.ref(); // the caller awaits this: keep the process alive until it is done
    child.stdin.end();
    await exited;
    // The watchdog removed it, unless it could not (it failed before it owned it).
    rmSync(dir, { recursive: true, force: true });
  };

  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      started,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    await stop();
    throw new Error(`PostgreSQL did not start in ${dir}: ${messageOf(error)}\n${output}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
  const url = `postgres://${POSTGRES_SUPERUSER}@127.0.0.1:${port}/postgres`;
  return { url, port, dir, log, stop };
}
