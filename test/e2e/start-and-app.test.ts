// What a newcomer runs: `parkbench start` (the bench in one command) and
// `parkbench app` against it, end to end, with a local third party receiving
// the forwarded box logs. Real processes, real ports, a real database.
import test, { type ExecutionContext } from 'ava';
import { appSessionArgs } from '../../lib/app-session-args.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { freePort, portIsFree } from '../../lib/free-port.js';
import { startReceiver } from '../helpers/receiver.js';
import { verifies } from '../helpers/webhook-receiver.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

/** The ready line's JSON, as `parkbench start` prints it. */
type Ready = ReadyInfo;

async function dataDir(t: ExecutionContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-start-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

async function start(
  t: ExecutionContext,
  directory: string,
  extra: string[] = [],
): Promise<{ bench: CliProcess; ready: Ready; port: number; mqttPort: number }> {
  const port = await freePort();
  const mqttPort = await freePort();
  const bench = startCli(
    t,
    ['start', '--data-dir', directory, '--port', String(port), '--mqtt-port', String(mqttPort), ...extra],
    { LOG_LEVEL: 'warn' },
  );
  const line = await bench.waitForLine(/^parkbench ready /, 60_000);
  return { bench, ready: JSON.parse(line.slice('parkbench ready '.length)) as Ready, port, mqttPort };
}

test.serial(
  'start prints the bench, app goes entering -> active -> exiting -> finished, logs are verified and forwarded, Ctrl-C leaves nothing',
  async (t) => {
    const directory = await dataDir(t);
    const { bench, ready, port, mqttPort } = await start(t, directory);
    t.regex(ready.api_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    t.is(ready.docs_url, `${ready.api_url}/docs`);
    t.regex(ready.mqtt_url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
    t.deepEqual(
      ready.boxes.map((box) => box.direction),
      ['entrance', 'exit'],
    );
    t.true(ready.token_curl.startsWith(`curl -s -X POST ${ready.api_url}/api/oauth/token`));
    t.is(bench.stdout.at(-1)?.startsWith('parkbench ready '), true, 'the ready line is the last line');
    t.true(bench.stdout.some((line) => line.includes(ready.client_secret)));
    const docs = await fetch(ready.docs_url);
    t.is(docs.status, 200);

    // A third party for the demo parking, set while the bench runs (the admin CLI on its database).
    const receiver = await startReceiver(t);
    const database = join(directory, 'parkbench.sqlite');
    const forwarding = await runCli([
      'admin',
      'parking',
      'forwarding',
      '--parking',
      String(ready.parking_id),
      '--url',
      receiver.url,
      '--expose',
      'true',
      '--json',
      '--database',
      database,
    ]);
    t.is(forwarding.code, 0, forwarding.stderr);
    const secret = (JSON.parse(forwarding.stdout) as { forwarding_secret: string }).forwarding_secret;

    const app = await runCli(appSessionArgs(ready));
    t.is(app.code, 0, `${app.stdout}\n${app.stderr}`);
    for (const step of [
      'log in',
      'start a parking session',
      'entrance: send the smart key',
      'entrance: upload the box log',
      'session active',
      'pay in the sandbox',
      'exit: send the smart key',
      'exit: upload the box log',
      'session finished',
    ]) {
      t.true(app.stdout.includes(step), `the output shows "${step}"`);
    }
    // The session's story, from the database: both box logs verified, stored once each.
    const db = new Database(database, { readonly: true });
    t.teardown(() => db.close());
    const logs = db.prepare('SELECT verified, type, command_decrypted FROM box_logs ORDER BY id').all() as {
      verified: number;
      type: string;
      command_decrypted: string;
    }[];
    t.deepEqual(
      logs.map(({ verified, type }) => ({ verified, type })),
      [
        { verified: 1, type: 'in' },
        { verified: 1, type: 'out' },
      ],
    );
    // The demo parking is signed: its smart key is an ACCESS_SIGNED, its boxes hold no parking key.
    t.like(db.prepare('SELECT access_mode, parking_key FROM secured_parkings WHERE id = ?').get(ready.parking_id), {
      access_mode: 'signed',
      parking_key: null,
    });
    for (const log of logs) t.regex(log.command_decrypted, /^ACCESS_SIGNED key=\d+ parking=\d+ modules=/);
    await receiver.waitFor(1);
    await waitFor(
      () => receiver.received.reduce((sum, request) => sum + (JSON.parse(request.body) as unknown[]).length, 0) >= 2,
      'both box logs forwarded',
      30_000,
    );
    // Forwarded to 127.0.0.1: FORWARDING_ALLOW_PRIVATE is on under start; a
    // Standard Webhooks library verifies every delivery.
    t.regex(secret, /^whsec_/);
    t.true(
      receiver.received.every((request) => verifies(secret, request)),
      'the standardwebhooks package verifies them',
    );

    t.is(await bench.stop('SIGINT'), 0);
    t.true(await portIsFree(port), 'the HTTP port is free again');
    t.true(await portIsFree(mqttPort), 'the MQTT port is free again');
  },
);

test.serial(
  'a demo database made by an older parkbench (a sealed demo parking) still runs: app passes every step with its sealed ACCESS',
  async (t) => {
    const directory = await dataDir(t);
    const database = join(directory, 'parkbench.sqlite');
    const demo = await runCli(['admin', 'demo', '--json', '--database', database]);
    t.is(demo.code, 0, demo.stderr);
    // What migration 8 leaves of a version 1 demo parking: sealed, its parking key, no issuer keys.
    const old = new Database(database);
    old
      .prepare(
        "UPDATE secured_parkings SET access_mode = 'sealed', parking_key = '000102030405060708090a0b0c0d0e0f', issuer_private_key = NULL, issuer_public_key = NULL",
      )
      .run();
    old.close();
    const { bench, ready } = await start(t, directory);
    const app = await runCli(appSessionArgs(ready));
    t.is(app.code, 0, `${app.stdout}\n${app.stderr}`);
    t.true(app.stdout.includes('session finished'));
    const db = new Database(database, { readonly: true });
    t.teardown(() => db.close());
    const logs = db.prepare('SELECT verified, command_decrypted FROM box_logs ORDER BY id').all() as {
      verified: number;
      command_decrypted: string;
    }[];
    t.deepEqual(
      logs.map((log) => log.verified),
      [1, 1],
    );
    for (const log of logs) t.regex(log.command_decrypted, /^ACCESS key=\d+ parking=\d+ modules=/);
    t.is(await bench.stop('SIGTERM'), 0);
  },
);

/** The operator token in a dashboard URL's fragment (`/bench#token=...`). */
function dashboardToken(t: ExecutionContext, ready: Ready): string {
  const url = new URL(ready.dashboard_url);
  t.is(url.origin, ready.api_url);
  t.is(url.pathname, '/bench');
  return new URLSearchParams(url.hash.slice(1)).get('token') ?? '';
}

function fetchOperatorParkings(ready: Ready, token: string): Promise<Response> {
  return fetch(`${ready.api_url}/api/operator/parkings`, { headers: { authorization: `Bearer ${token}` } });
}

test.serial('the demo data survives a restart; --fresh starts over', async (t) => {
  const directory = await dataDir(t);
  const first = await start(t, directory);
  // The dashboard URL carries an operator login in its fragment, in the banner and the ready line.
  const firstToken = dashboardToken(t, first.ready);
  t.regex(firstToken, /^[A-Za-z0-9_-]{43}$/);
  t.true(first.bench.stdout.some((line) => line.includes(`dashboard    ${first.ready.dashboard_url}`)));
  t.is((await fetchOperatorParkings(first.ready, firstToken)).status, 200);
  t.is(await first.bench.stop('SIGTERM'), 0);
  const again = await start(t, directory);
  t.is(again.ready.client_app_id, first.ready.client_app_id);
  t.is(again.ready.driver.password, first.ready.driver.password);
  // The same operator account, a fresh token each start: the last one no longer logs in.
  const againToken = dashboardToken(t, again.ready);
  t.not(againToken, firstToken);
  t.is((await fetchOperatorParkings(again.ready, againToken)).status, 200);
  t.is((await fetchOperatorParkings(again.ready, firstToken)).status, 401);
  t.is(await again.bench.stop('SIGTERM'), 0);
  const fresh = await start(t, directory, ['--fresh']);
  t.not(fresh.ready.client_app_id, first.ready.client_app_id);
  t.is(await fresh.bench.stop('SIGTERM'), 0);
});

test.serial('a busy port is one clear line naming it', async (t) => {
  const directory = await dataDir(t);
  const { bench, port } = await start(t, directory);
  const other = await runCli([
    'start',
    '--data-dir',
    join(directory, 'other'),
    '--port',
    String(port),
    '--mqtt-port',
    String(await freePort()),
  ]);
  t.is(other.code, 1);
  t.regex(other.stderr, new RegExp(`^parkbench: .*HTTP port ${port} on 127\\.0\\.0\\.1 is already in use`));
  t.is(other.stderr.trim().split('\n').length, 1);
  t.is(await bench.stop('SIGTERM'), 0);
});

test.serial('app fails at the step that went wrong, with the reason, and exit code 1', async (t) => {
  const directory = await dataDir(t);
  const { bench, ready } = await start(t, directory);
  const wrongPassword = await runCli([
    ...appSessionArgs(ready).slice(0, -4),
    '--password',
    'not-the-password',
    '--parking',
    String(ready.parking_id),
  ]);
  t.is(wrongPassword.code, 1);
  t.regex(wrongPassword.stderr, /step failed: log in: .*400/);
  const noBox = await runCli([...appSessionArgs(ready), '--exit-box', '4242', '--answer-ms', '500']);
  t.is(noBox.code, 1);
  t.regex(noBox.stderr, /step failed: exit: send the smart key to box 4242: box 4242 did not answer within 500 ms/);
  t.is(await bench.stop('SIGTERM'), 0);
});
