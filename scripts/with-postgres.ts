// Runs a command (the test suite) with one PostgreSQL server for all of it:
// `npm test` and `npm run coverage` go through here. Without it each test
// file that needs PostgreSQL starts a server of its own (initdb and start:
// 5 to 15 s each on this machine); with it they each make a database on
// this one (test/helpers/postgres.ts, PARKBENCH_TEST_DATABASE_URL).
//
// Nothing is started when PARKBENCH_TEST_DATABASE_URL already names a
// server, or when PostgreSQL is not installed (those tests then skip with
// one line, or fail under CI: test/helpers/requires.ts). The server stops
// and its folder goes when the command ends, however this process ends
// (testkit/postgres-server.ts's watchdog).
//
// Usage: tsx scripts/with-postgres.ts <command> [args...]
import { spawn } from 'node:child_process';
import {
  EXISTING_SERVER_VARIABLE,
  postgresBinDir,
  startPostgres,
  type PostgresServer,
} from '../testkit/postgres-server.js';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write('usage: tsx scripts/with-postgres.ts <command> [args...]\n');
  process.exit(2);
}

let server: PostgresServer | undefined;
const env = { ...process.env };
if ((env[EXISTING_SERVER_VARIABLE] ?? '') === '' && postgresBinDir() !== undefined) {
  // Test files connect at once, each test with a pool of its own.
  server = await startPostgres({ settings: { max_connections: '400' } });
  env[EXISTING_SERVER_VARIABLE] = server.url;
}

const child = spawn(command, args, { stdio: 'inherit', env });
// Ctrl-C reaches the child through the terminal's process group; a TERM sent to us alone is passed on.
process.on('SIGTERM', () => child.kill('SIGTERM'));
process.on('SIGINT', () => undefined);
const code = await new Promise<number>((resolve) => {
  child.once('error', (error) => {
    process.stderr.write(`${command}: ${error.message}\n`);
    resolve(127);
  });
  child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal === null ? 1 : 128)));
});
await server?.stop();
process.exit(code);
