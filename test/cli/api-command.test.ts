// `parkbench api` as a process: configuration errors, start, /health, SIGTERM.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import test from 'ava';
import { builtBin, runCli } from '../helpers/run-cli.js';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { waitFor } from '../helpers/wait.js';

test('bad configuration: one line on stderr, exit 2', async (t) => {
  for (const [env, flags, name] of [
    [{ PORT: 'abc' }, [], 'PORT'],
    [{ PORT: '70000' }, [], 'PORT'],
    [{}, ['--port', '-1'], '--port'],
    [{ TOKEN_TTL_SECONDS: '0' }, [], 'TOKEN_TTL_SECONDS'],
    [{ BODY_LIMIT_BYTES: '1MB' }, [], 'BODY_LIMIT_BYTES'],
    [{ LOG_LEVEL: 'loud' }, [], 'LOG_LEVEL'],
    [{ PUBLIC_URL: 'not a url' }, [], 'PUBLIC_URL'],
    [{ MQTT_URL: 'http://x' }, [], 'MQTT_URL'],
    [{ DATABASE_URL: 'mysql://park:hunter2@db/parkbench' }, [], 'DATABASE_URL'],
    [{}, ['--database-url', 'postgres://park:hunter2@db'], '--database-url'],
    [{ PORT: '3000' }, ['--port', 'x'], '--port'],
  ] as const) {
    const result = await runCli(['api', ...flags], { env });
    t.is(result.code, 2, JSON.stringify(env));
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    t.true(result.stderr.includes(name), result.stderr);
    t.false(result.stderr.includes('hunter2'), 'a password is never shown');
  }
});

test('a PostgreSQL that does not answer: one line naming the URL without its password, exit 1', async (t) => {
  const port = await freePort();
  const result = await runCli(['api', '--port', '0'], {
    env: { DATABASE_URL: `postgres://park:hunter2@127.0.0.1:${port}/parkbench`, MQTT_PORT: '0' },
  });
  t.is(result.code, 1, result.stderr);
  t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  t.regex(
    result.stderr,
    new RegExp(
      `cannot start the API: PostgreSQL at postgres://park:\\*+@127\\.0\\.0\\.1:${port}/parkbench: .*ECONNREFUSED`,
    ),
  );
  t.false(result.stderr.includes('hunter2'), 'a password is never shown');
});

test('starts, answers /health, and exits 0 on SIGTERM after closing', async (t) => {
  const dir = tempDir(t);
  const child = spawn(process.execPath, [builtBin(), 'api', '--port', '0', '--log-level', 'info'], {
    env: { ...process.env, DATABASE_PATH: join(dir, 'new', 'folder', 'api.sqlite'), MQTT_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  let output = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${String(code)}: ${output}`)));
  });
  const health = await fetch(`${address}/health`);
  t.is(health.status, 200);
  // Where the bench page is (no login in it: an operator brings their own token).
  await waitFor(() => output.includes(`"dashboard_url":"${address}/bench"`), 'the bench page URL logged');
  // A request in flight when SIGTERM arrives still gets its answer: a token
  // request spends scrypt time (2^15) checking the client.
  const inFlight = fetch(`${address}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'password',
      username: 'a@b.co',
      password: 'whatever',
      client_app_id: 'x',
      client_secret: 'y',
    }),
  });
  // SIGTERM only once the server logged the request's arrival.
  await new Promise<void>((resolve) => {
    const check = () => {
      if (output.includes('"url":"/api/oauth/token"')) {
        child.stdout.off('data', check);
        resolve();
      }
    };
    child.stdout.on('data', check);
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const answered = await inFlight;
  t.is(answered.status, 401);
  t.is(((await answered.json()) as { error: string }).error, 'invalid_client');
  t.is(await exited, 0, output);
  t.regex(output, /"msg":"stopped"/);
});
