// `parkbench start --database-url`: the bench on a PostgreSQL
// database. The first start migrates the empty database and seeds the demo;
// `parkbench app` plays a whole session; a second start finds the same demo
// (the same client app) in the same database, named by DATABASE_URL this
// time, and says which (its password masked); `--fresh` is refused with a
// URL, since parkbench never empties a server database.
import { join } from 'node:path';
import avaTest from 'ava';
import pg from 'pg';
import { parsePostgresUrl } from '../../api/config/index.js';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { appSessionArgs } from '../../lib/app-session-args.js';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { postgresForFile } from '../helpers/postgres.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';

const test = testNeeding('postgres', avaTest.serial);
const database = postgresForFile(avaTest);

test('start --database-url: the bench runs a whole session on PostgreSQL, and a restart finds its data there', async (t) => {
  t.timeout(180_000);
  const dataDir = join(tempDir(t, 'parkbench-start-postgres-'), 'data');
  const { url } = database();
  const args = async (database: string[]): Promise<string[]> => [
    'start',
    ...['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(await freePort())],
    ...[...database, '--speed', '20'],
  ];

  const first = startCli(t, await args(['--database-url', url]), { LOG_LEVEL: 'warn' });
  const ready = JSON.parse(
    (await first.waitForLine(/^parkbench ready /, 90_000)).slice('parkbench ready '.length),
  ) as ReadyInfo;
  const app = await runCli(appSessionArgs(ready));
  t.is(app.code, 0, `${app.stdout}\n${app.stderr}`);
  for (const step of ['entrance: send the smart key', 'session active', 'exit: send the smart key', 'session finished'])
    t.true(app.stdout.includes(step), `the output shows "${step}"`);
  t.is(await first.stop('SIGTERM'), 0);

  // What the session left is in PostgreSQL, not in a SQLite file of the data folder.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sessions = await client.query<{ state: string }>('SELECT state FROM parking_sessions');
    t.deepEqual(
      sessions.rows.map((row) => row.state),
      ['finished'],
    );
    const logs = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM box_logs WHERE verified = 1');
    t.true((logs.rows[0]?.n ?? 0) >= 2, 'the entrance and exit boxes answered, verified');
  } finally {
    await client.end();
  }

  // Again, the URL in the environment this time (and a DATABASE_PATH it wins over).
  const again = startCli(t, await args([]), {
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    DATABASE_PATH: join(dataDir, 'not-this.sqlite'),
  });
  const readyAgain = JSON.parse(
    (await again.waitForLine(/^parkbench ready /, 90_000)).slice('parkbench ready '.length),
  ) as ReadyInfo;
  t.is(readyAgain.client_app_id, ready.client_app_id, 'the demo found in the database, not made anew');
  t.is(readyAgain.database, parsePostgresUrl(url).shown, 'the ready line names the URL, its password masked');
  t.is(ready.database, readyAgain.database);
  const password = new URL(url).password;
  if (password !== '') t.false(readyAgain.database.includes(password));
  const health = (await (await fetch(`${readyAgain.api_url}/health`)).json()) as { database: string };
  t.is(health.database, readyAgain.database);
  t.is(await again.stop('SIGTERM'), 0);
});

test('start --fresh --database-url: refused in one line, exit 2, nothing touched', async (t) => {
  const dataDir = join(tempDir(t, 'parkbench-start-postgres-'), 'data');
  const result = await runCli(['start', '--data-dir', dataDir, '--database-url', database().url, '--fresh']);
  t.is(result.code, 2, result.stderr);
  t.regex(result.stderr, /--fresh empties the bench's SQLite file, not a PostgreSQL database/);
  t.is(result.stderr.trim().split('\n').length, 1);
});
