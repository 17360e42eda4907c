// Conformance runs in a real `parkbench api` process, with a real simulated
// box on its embedded broker (in this process, on the system clock, as the
// run's timings are real ones):
// - the API killed with SIGKILL right after the suite has put its own issuer
//   keys on the box: the put-back queued when the run started survives it,
//   and once the dead run's hold has passed (CONFORMANCE_HOLD_MS, short
//   here) the restarted API sends it; the box then holds the service's keys
//   and a freshly signed ACCESS_SIGNED opens it. On SQLite and PostgreSQL.
// - SIGTERM while a run waits for a silent box with answer_ms at its largest:
//   the API stops within its 10 s and exits 0, the box released.
//
// Setup goes through the CLI and checks through the operator API.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import avaTest, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { systemClock } from '../../lib/clock.js';
import { freePort } from '../../lib/free-port.js';
import { parseProvisioning, type Provisioning } from '../../lib/provisioning-file.js';
import { BoxMqttLink } from '../../simulator/links/mqtt-link.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { FAST_BARRIER } from '../helpers/conformance-fixtures.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { postgresForFile } from '../helpers/postgres.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

// One at a time: each runs an API process and a run of the suite.
const test = avaTest.serial;
const postgresTest = testNeeding('postgres', avaTest.serial);
const database = postgresForFile(avaTest);

/** `parkbench admin ...` on the test's database; its JSON output. */
async function admin(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await runCli(['admin', ...args, '--json'], { env });
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** A signed parking with one box, an operator; the box's provisioning file as `admin box provision` writes it. */
async function seed(
  env: NodeJS.ProcessEnv,
  dir: string,
  moduleId: number,
): Promise<{ token: string; provisioning: Provisioning }> {
  const parking = await admin(env, [
    'parking',
    'create',
    '--name',
    'Conformance',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.00',
    '--max-duration-minutes',
    '120',
    '--access',
    'signed',
  ]);
  const mac = `02:50:42:00:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`;
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
  const file = join(dir, `box-${moduleId}.json`);
  const provisioned = await runCli(['admin', 'box', 'provision', '--module-id', String(moduleId), '--out', file], {
    env,
  });
  if (provisioned.code !== 0) throw new Error(provisioned.stderr);
  const operator = await admin(env, ['operator', 'add', '--name', 'conformance-e2e']);
  return {
    token: operator.token as string,
    provisioning: parseProvisioning(JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>),
  };
}

interface Api {
  readonly base: string;
  readonly env: NodeJS.ProcessEnv;
  process: CliProcess;
  start(): Promise<void>;
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

async function api(t: ExecutionContext, store: NodeJS.ProcessEnv, token: string): Promise<Api> {
  const port = await freePort();
  const env = {
    ...store,
    HOST: '127.0.0.1',
    PORT: String(port),
    MQTT_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    CONTROL_POLL_MS: '200',
    // A dead run's hold passes in 3 s.
    CONFORMANCE_HOLD_MS: '3000',
  };
  const base = `http://127.0.0.1:${port}`;
  const handle: Api = {
    base,
    env,
    process: undefined as unknown as CliProcess,
    async start() {
      handle.process = startCli(t, ['api'], env);
      await handle.process.waitForLine(/the bench page/, 60_000);
    },
    async call(method: 'GET' | 'POST', path: string, body?: unknown) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const answer: unknown = await response.json();
      return { status: response.status, body: answer };
    },
  };
  await handle.start();
  return handle;
}

/** The box simulated on the API's broker, reconnecting every 100 ms while the broker is away. */
async function simulatedBox(t: ExecutionContext, provisioning: Provisioning, mqttPort: string): Promise<SimulatedBox> {
  const box = await SimulatedBox.start({ provisioning, clock: systemClock, barrierTimings: FAST_BARRIER });
  const link = new BoxMqttLink(box, {
    url: `mqtt://127.0.0.1:${mqttPort}`,
    username: provisioning.mqtt?.username ?? '',
    password: provisioning.mqtt?.password ?? '',
    clock: systemClock,
    backoff: { initialMs: 100, maxMs: 200, factor: 2, jitter: 0 },
  });
  t.teardown(async () => {
    await link.stop();
    await box.stop();
  });
  await link.start();
  return box;
}

interface ParkingsBody {
  boxes: { module_id: number; availability: string; pending_control_commands: { purpose: string }[] }[];
}

async function boxEntry(server: Api, moduleId: number): Promise<ParkingsBody['boxes'][number] | undefined> {
  const body = (await server.call('GET', '/api/operator/parkings')).body as ParkingsBody[];
  return body.flatMap((parking) => parking.boxes).find((box) => box.module_id === moduleId);
}

const hex = (key: Uint8Array | null | undefined): string =>
  key === null || key === undefined ? 'none' : Buffer.from(key).toString('hex');

async function killedMidRun(t: ExecutionContext, dir: string, store: NodeJS.ProcessEnv): Promise<void> {
  t.timeout(240_000);
  const moduleId = 9401;
  const { token, provisioning } = await seed(store, dir, moduleId);
  const server = await api(t, store, token);
  const box = await simulatedBox(t, provisioning, server.env.MQTT_PORT ?? '');
  const serviceKey = hex(provisioning.issuerKey);
  await waitFor(async () => (await boxEntry(server, moduleId))?.availability === 'online', 'the box online', 20_000);

  const started = await server.call('POST', `/api/operator/boxes/${moduleId}/conformance`, {
    skip_wearing: true,
    cycle_ms: 5_000,
  });
  t.is(started.status, 202, JSON.stringify(started.body));
  await waitFor(() => hex(box.state.issuerKey) !== serviceKey, "the suite's issuers on the box", 120_000);
  server.process.child.kill('SIGKILL');
  t.is(await server.process.exited, 'SIGKILL');
  t.not(hex(box.state.issuerKey), serviceKey, 'the box holds the suite issuers when the API dies');

  // The put-back queued at the start goes out once the dead run's hold has passed.
  await server.start();
  await waitFor(() => hex(box.state.issuerKey) === serviceKey, "the service's issuer key back on the box", 60_000);
  t.is(hex(box.state.issuerKeyPrevious), hex(provisioning.issuerKeyPrevious));
  await waitFor(
    async () => (await boxEntry(server, moduleId))?.pending_control_commands.length === 0,
    'nothing pending for the box',
    20_000,
  );
  // A freshly signed ACCESS_SIGNED of the parking opens the box.
  const access = await server.call('POST', `/api/operator/boxes/${moduleId}/commands`, { command: 'access' });
  t.is(access.status, 200, JSON.stringify(access.body));
  t.like(access.body, { verified: true, status: 'OK' });
  t.is(await server.process.stop('SIGTERM'), 0);
}

const KILLED =
  "SIGKILL of the API after the suite put its issuers on the box: once the run's hold passes, the restarted API puts the service's keys back and a signed key opens";

test(`${KILLED} [sqlite]`, async (t) => {
  const dir = tempDir(t, 'parkbench-conformance-');
  await killedMidRun(t, dir, { DATABASE_PATH: join(dir, 'parkbench.sqlite'), DATABASE_URL: '' });
});

postgresTest(`${KILLED} [postgres]`, async (t) => {
  await killedMidRun(t, tempDir(t, 'parkbench-conformance-'), { DATABASE_URL: database().url });
});

test('SIGTERM while a run waits for a silent box (answer_ms 600000): the API stops within 10 s, exits 0, and leaves the box free', async (t) => {
  t.timeout(120_000);
  const dir = tempDir(t, 'parkbench-conformance-');
  const databasePath = join(dir, 'parkbench.sqlite');
  // No simulator: the box never answers (its availability unknown, so the run starts).
  const moduleId = 9402;
  const { token } = await seed({ DATABASE_PATH: databasePath, DATABASE_URL: '' }, dir, moduleId);
  const server = await api(t, { DATABASE_PATH: databasePath, DATABASE_URL: '' }, token);
  const started = await server.call('POST', `/api/operator/boxes/${moduleId}/conformance`, {
    answer_ms: 600_000,
  });
  t.is(started.status, 202, JSON.stringify(started.body));
  // The first command is out, its answer awaited.
  await server.process.waitForLine(/conformance run started/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const signalled = Date.now();
  const code = await server.process.stop('SIGTERM');
  const tookMs = Date.now() - signalled;
  t.is(code, 0, server.process.stderr.slice(-20).join('\n'));
  t.true(tookMs < 10_000, `stopped in ${tookMs} ms`);
  t.true(
    server.process.stdout.some((line) => line.includes('conformance run ended') && line.includes('the API stopped')),
    server.process.stdout.slice(-20).join('\n'),
  );
  // The run released its box: no hold left, its put-back done (it never touched the keys).
  const db = new Database(databasePath, { readonly: true });
  t.teardown(() => db.close());
  t.deepEqual(db.prepare('SELECT * FROM box_holds').all(), []);
  t.deepEqual(
    db.prepare("SELECT state FROM control_commands WHERE module_id = ? AND purpose = 'restore'").all(moduleId),
    [{ state: 'done' }],
  );
});
