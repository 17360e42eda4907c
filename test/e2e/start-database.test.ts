// `parkbench start` finds its database by the rule every command follows
// (api/config.ts): --database, then DATABASE_URL, then DATABASE_PATH, then
// its own default under --data-dir. Real processes on a temporary folder: a
// bench started with DATABASE_PATH in its environment runs on that file and
// says so (the ready line, GET /health), and `admin operator add` in another
// process with the same environment writes the token the running bench takes.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { runCli } from '../helpers/run-cli.js';

test.serial(
  'start honours DATABASE_PATH: the ready line and /health name it, and an operator added with the same environment is let in',
  async (t) => {
    t.timeout(120_000);
    const folder = tempDir(t, 'parkbench-start-database-');
    const databasePath = join(folder, 'shared', 'parkbench.sqlite');
    const dataDir = join(folder, 'bench');
    // The environment a user exports once for every terminal; an empty
    // DATABASE_URL, so a test run's own settings do not leak in.
    const env = { DATABASE_PATH: databasePath, DATABASE_URL: '', SCRYPT_LOG2_N: '10', LOG_LEVEL: 'warn' };
    const bench = startCli(
      t,
      ['start', '--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(await freePort())],
      env,
    );
    const ready = JSON.parse(
      (await bench.waitForLine(/^parkbench ready /, 90_000)).slice('parkbench ready '.length),
    ) as ReadyInfo;
    // Another terminal, the same environment: the token it prints opens the running bench's operator API.
    const added = await runCli(['admin', 'operator', 'add', '--name', 'second-terminal', '--json'], { env });
    t.is(added.code, 0, added.stderr);
    const { token } = JSON.parse(added.stdout) as { token: string };
    const parkings = await fetch(`${ready.api_url}/api/operator/parkings`, {
      headers: { authorization: `Bearer ${token}` },
    });
    t.is(parkings.status, 200, await parkings.clone().text());

    t.is(ready.database, databasePath);
    t.true(
      bench.stdout.some((line) => line === `  database     ${databasePath}`),
      'the human lines name it too',
    );
    t.true(existsSync(databasePath), 'the bench made its database where DATABASE_PATH says');
    t.false(existsSync(join(dataDir, 'parkbench.sqlite')), 'and none under --data-dir');
    const health = await fetch(`${ready.api_url}/health`);
    t.is(health.status, 200);
    t.like(await health.json(), { status: 'ok', database: databasePath });
    t.is(await bench.stop('SIGTERM'), 0);
  },
);

test.serial('start --database wins over DATABASE_PATH, and the ready line names the file it took', async (t) => {
  t.timeout(120_000);
  const folder = tempDir(t, 'parkbench-start-database-');
  const chosen = join(folder, 'chosen.sqlite');
  const bench = startCli(
    t,
    [
      'start',
      ...['--data-dir', join(folder, 'bench'), '--database', chosen],
      ...['--port', String(await freePort()), '--mqtt-port', String(await freePort())],
    ],
    { DATABASE_PATH: join(folder, 'environment.sqlite'), DATABASE_URL: '', LOG_LEVEL: 'warn' },
  );
  const ready = JSON.parse(
    (await bench.waitForLine(/^parkbench ready /, 90_000)).slice('parkbench ready '.length),
  ) as ReadyInfo;
  t.is(ready.database, chosen);
  t.true(existsSync(chosen));
  t.false(existsSync(join(folder, 'environment.sqlite')));
  t.is(await bench.stop('SIGTERM'), 0);
});
