// Reservations across two real `parkbench api` processes on one database
// (PostgreSQL, and one SQLite file): a reserve through one holds against
// the other; two takes at once, one through each, give the box to one; the
// other process's waiting reserve gets the box when the first releases,
// seen at its next poll (RESERVATION_POLL_MS).
//
// Setup goes through the CLI and checks through the operator API.
import { join } from 'node:path';
import avaTest, { type ExecutionContext } from 'ava';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { postgresForFile } from '../helpers/postgres.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';

// One at a time: each runs two API processes.
const test = avaTest.serial;
const postgresTest = testNeeding('postgres', avaTest.serial);
const database = postgresForFile(avaTest);

const BOX = 9501;
const OTHER_BOX = 9502;

/** `parkbench admin ...` on the test's database; its JSON output. */
async function admin(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await runCli(['admin', ...args, '--json'], { env });
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** A parking with two boxes, two operators; their tokens. */
async function seed(env: NodeJS.ProcessEnv): Promise<{ ci: string; ada: string }> {
  const parking = await admin(env, [
    'parking',
    'create',
    '--name',
    'Reserved',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.00',
    '--max-duration-minutes',
    '120',
    '--access',
    'sealed',
  ]);
  for (const [moduleId, mac] of [
    [BOX, '02:50:42:00:95:01'],
    [OTHER_BOX, '02:50:42:00:95:02'],
  ] as const)
    await admin(env, [
      'box',
      'add',
      '--parking',
      String(parking.id),
      '--module-id',
      String(moduleId),
      '--mac',
      mac,
      '--direction',
      'entrance',
    ]);
  const ci = await admin(env, ['operator', 'add', '--name', 'ci']);
  const ada = await admin(env, ['operator', 'add', '--name', 'ada']);
  return { ci: ci.token as string, ada: ada.token as string };
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

type Call = (
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  token: string,
  options?: { body?: unknown; reservation?: string },
) => Promise<Answer>;

/** A `parkbench api` process on the database; how to call it. */
async function api(t: ExecutionContext, store: NodeJS.ProcessEnv): Promise<Call> {
  const port = await freePort();
  const server = startCli(t, ['api'], {
    ...store,
    HOST: '127.0.0.1',
    PORT: String(port),
    MQTT_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    RESERVATION_POLL_MS: '100',
  });
  await server.waitForLine(/the bench page/, 60_000);
  t.teardown(() => server.stop('SIGTERM'));
  return async (method, path, token, options = {}) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(options.reservation === undefined ? {} : { 'parkbench-reservation': options.reservation }),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
}

async function twoProcesses(t: ExecutionContext, store: NodeJS.ProcessEnv): Promise<void> {
  t.timeout(180_000);
  const { ci, ada } = await seed(store);
  const [first, second] = await Promise.all([api(t, store), api(t, store)]);
  const reservation = `/api/operator/boxes/${BOX}/reservation`;

  const taken = await first('POST', reservation, ci, { body: { ttl_seconds: 600, note: 'CI job 5' } });
  t.is(taken.status, 201, JSON.stringify(taken.body));
  const token = String(taken.body.token);
  // Held against the other process: its reserve and its commands.
  const refused = await second('POST', reservation, ada, { body: { ttl_seconds: 60 } });
  t.is(refused.status, 409);
  t.like(refused.body, { error: 'box_reserved', holder: 'ci', note: 'CI job 5', expires_at: taken.body.expires_at });
  const command = await second('POST', `/api/operator/boxes/${BOX}/commands`, ada, { body: { command: 'status' } });
  t.is(command.status, 409);
  t.is(command.body.error, 'box_reserved');

  // The other process's waiting reserve, queued, gets the box at the release through the first.
  const waiting = second('POST', reservation, ada, { body: { ttl_seconds: 60, wait_seconds: 60, note: 'ada' } });
  for (let spin = 0; spin < 200; spin++) {
    const seen = (await first('GET', reservation, ci)).body.reservation as { queue: unknown[] } | null;
    if (seen?.queue.length === 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.like((await first('GET', reservation, ci)).body, { reservation: { holder: 'ci', queue: [{ holder: 'ada' }] } });
  const released = Date.now();
  t.is((await first('DELETE', reservation, ci, { reservation: token })).status, 204);
  const got = await waiting;
  t.is(got.status, 201, JSON.stringify(got.body));
  t.like(got.body, { holder: 'ada', note: 'ada', queue: [] });
  t.true(Date.now() - released < 5_000, `${Date.now() - released} ms after the release`);
  t.like((await first('GET', reservation, ci)).body, { reservation: { holder: 'ada' } });

  // Two takes of a free box at once, one through each process: exactly one 201.
  const other = `/api/operator/boxes/${OTHER_BOX}/reservation`;
  const both = await Promise.all([
    first('POST', other, ci, { body: { ttl_seconds: 60 } }),
    second('POST', other, ada, { body: { ttl_seconds: 60 } }),
  ]);
  t.deepEqual(both.map((answer) => answer.status).sort(), [201, 409], JSON.stringify(both));
}

const TITLE =
  'two API processes on one database: a reserve through one holds against the other, two takes at once give the box to one, the waiting one gets it at the release';

test(`${TITLE} [sqlite]`, async (t) => {
  const dir = tempDir(t, 'parkbench-reservations-');
  await twoProcesses(t, { DATABASE_PATH: join(dir, 'parkbench.sqlite'), DATABASE_URL: '' });
});

postgresTest(`${TITLE} [postgres]`, async (t) => {
  await twoProcesses(t, { DATABASE_URL: database().url });
});
