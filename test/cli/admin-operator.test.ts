// `parkbench admin operator add|remove|list` through the real entry point
// (child processes), on the database of a running app: the token it prints
// opens /api/operator/..., and `remove` refuses it on the next request.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { openDatabase } from '../../api/db/open.js';
import { errorBody, tempDir, testApp } from '../helpers/api-app.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';

function admin(
  t: ExecutionContext,
  databasePath = join(tempDir(t, 'parkbench-operator-'), 'data', 'admin.sqlite'),
  database: Record<string, string> = { DATABASE_PATH: databasePath },
) {
  const env = { ...database, SCRYPT_LOG2_N: '10', MQTT_URL: '' };
  return {
    databasePath,
    run: (...args: string[]): Promise<CliResult> => runCli(['admin', 'operator', ...args], { env }),
  };
}

test('add --json prints {name, token} once: a URL-safe 256-bit token, stored only as its SHA-256', async (t) => {
  const cli = admin(t);
  const added = await cli.run('add', '--name', 'Grace', '--json');
  t.is(added.code, 0, added.stderr);
  const body = JSON.parse(added.stdout) as Record<string, string>;
  t.deepEqual(Object.keys(body), ['name', 'token']);
  t.is(body.name, 'Grace');
  t.regex(body.token ?? '', /^[A-Za-z0-9_-]{43}$/);
  const db = openDatabase(cli.databasePath, { readonly: true });
  t.teardown(() => db.close());
  const rows = db.prepare('SELECT name, token_hash FROM operators').all() as { name: string; token_hash: Buffer }[];
  t.deepEqual(rows, [
    {
      name: 'Grace',
      token_hash: createHash('sha256')
        .update(body.token ?? '')
        .digest(),
    },
  ]);
  const text = await cli.run('add', '--name', 'Alan');
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^name: Alan\ntoken: [A-Za-z0-9_-]{43}\n\nThe token is shown only now/);
});

test('a duplicate name is a one-line error, exit 1; a bad name exit 2; list shows names, never tokens', async (t) => {
  const cli = admin(t);
  const token = (JSON.parse((await cli.run('add', '--name', 'Grace', '--json')).stdout) as { token: string }).token;
  const duplicate = await cli.run('add', '--name', 'Grace');
  t.is(duplicate.code, 1);
  t.is(duplicate.stdout, '');
  t.is(duplicate.stderr, 'parkbench: an operator named "Grace" exists already\n');
  for (const bad of ['', '   ', 'a\u001bb', 'x'.repeat(101)]) {
    const result = await cli.run('add', '--name', bad);
    t.is(result.code, 2, JSON.stringify(bad));
    t.is(result.stderr.trim().split('\n').length, 1);
  }
  const list = await cli.run('list', '--json');
  t.is(list.code, 0, list.stderr);
  t.deepEqual(
    (JSON.parse(list.stdout) as { name: string }[]).map((operator) => operator.name),
    ['Grace'],
  );
  t.false(list.stdout.includes(token));
  t.regex((await cli.run('list')).stdout, /^Grace\tadded \d{4}-/);
  const unknown = await cli.run('remove', '--name', 'Nobody');
  t.is(unknown.code, 1);
  t.is(unknown.stderr, 'parkbench: no operator named "Nobody"\n');
});

test('the token printed opens /api/operator/... of a running API; remove (another process) refuses it at once', async (t) => {
  const dir = tempDir(t);
  const app = await testApp(t, {}, { dir });
  const cli = admin(t, app.config.databasePath, app.databaseEnv);
  const { token } = JSON.parse((await cli.run('add', '--name', 'bench', '--json')).stdout) as { token: string };
  const parkings = () =>
    app.app.inject({ method: 'GET', url: '/api/operator/parkings', headers: { authorization: `Bearer ${token}` } });
  t.is((await parkings()).statusCode, 200);
  const removed = await cli.run('remove', '--name', 'bench');
  t.is(removed.code, 0, removed.stderr);
  t.is(removed.stdout, 'operator "bench" removed: its token is refused from now on\n');
  const after = await parkings();
  t.is(after.statusCode, 401);
  t.is(errorBody(t, after).error, 'invalid_token');
});
