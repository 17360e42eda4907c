// npm run perf:processes [-- --rounds 2 --seconds 8 --boxes 40 --per-box 250 --store sqlite|postgres]
// (PERF_MQTT_DEADLINE_MS, default 120,000: how long an MQTT round may take)
//
// Two API processes against one: box logs stored per second by
// `parkbench api` processes sharing one database and one mosquitto, one
// process against two, in alternating rounds (the machine is shared: a burst
// of load spoils one round, not the figure; the verdict is the median of the
// rounds' ratios).
// - HTTP: POST /api/box_logs, batches of 50 verified logs each sealed afresh
//   (autocannon, the connections spread evenly over the processes); stored
//   per second = 201s x 50 / seconds.
// - MQTT: the boxes' verified responses published at QoS 1 through mosquitto
//   to the processes' shared subscription; mosquitto acknowledges a publish
//   when it has it, so the rate is the rows counted in the database from the
//   first publish until the last one is stored.
// Setup goes through the CLI, as an operator would do it. `--store postgres`:
// the processes share a database on a PostgreSQL server started for the run
// (as durable as the SQLite store, perf/support/bench-databases.ts), the
// way several processes share a store; the default is one SQLite file.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { openStore } from '../api/db/open-store.js';
import { freePort } from '../lib/free-port.js';
import { startMosquittoServer, type MosquittoServer } from '../testkit/mosquitto.js';
import { benchDatabases, benchStoreOf } from './support/bench-databases.js';
import { boxLogBatch, type BoxLogFixture } from './support/box-log-batches.js';
import { formatNumber, startCli, startTsx, type Child } from './support/processes.js';

const rounds = Number(argument('--rounds') ?? 2);
const seconds = Number(argument('--seconds') ?? 8);
const boxes = Number(argument('--boxes') ?? 40);
const perBox = Number(argument('--per-box') ?? 250);
const CONNECTIONS = 32;
const BATCH = 50;
const API_ACCOUNT = { username: 'parkbench-api', password: 'bench-api-password' };
const worker = new URL('./support/ingest-worker.ts', import.meta.url);
const directory = await mkdtemp(join(tmpdir(), 'pb-bench-processes-'));
const databases = await benchDatabases(benchStoreOf(argument('--store')), directory);
const shared = await databases.fresh('processes');
/** DATABASE_PATH or DATABASE_URL, as each process and admin command gets it. */
const database = shared.env;
/** Numbers the API processes' client ids and the fleet files. */
let apiNumber = 0;
let fleetNumber = 0;

let broker: MosquittoServer | undefined;
try {
  console.log(
    `API processes benchmark: 1 against 2 processes on one ${databases.store === 'postgres' ? 'PostgreSQL database' : 'SQLite file'} and one mosquitto, ${rounds} rounds each, 2-core machine`,
  );
  const seeded = await seed();
  broker = await startMosquittoServer(join(directory, 'mosquitto'), API_ACCOUNT);
  const fixture = await sessionFixture(broker, seeded);
  const rates = new Map<number, { http: number[]; mqtt: number[] }>([
    [1, { http: [], mqtt: [] }],
    [2, { http: [], mqtt: [] }],
  ]);
  for (let round = 0; round < rounds; round++) {
    // Alternating which goes first: the database grows, and the machine's load drifts.
    for (const count of round % 2 === 0 ? [1, 2] : [2, 1]) {
      const apis = await startApis(count, broker);
      try {
        const http = await httpRate(
          apis.map((api) => api.base),
          fixture,
        );
        const mqtt = await mqttRate(broker, seeded.parkingId);
        rates.get(count)?.http.push(http);
        rates.get(count)?.mqtt.push(mqtt);
        console.log(
          `round ${round + 1}, ${count} process${count === 1 ? ' ' : 'es'}: HTTP ${formatNumber(http)} logs stored/s, MQTT ${formatNumber(mqtt)} logs stored/s`,
        );
      } finally {
        await Promise.all(apis.map((api) => api.child.stop()));
      }
    }
  }
  for (const kind of ['http', 'mqtt'] as const) {
    const one = rates.get(1)?.[kind] ?? [];
    const two = rates.get(2)?.[kind] ?? [];
    const ratios = two.map((rate, index) => rate / (one[index] ?? rate));
    console.log(
      `${kind === 'http' ? 'HTTP' : 'MQTT'}: medians ${formatNumber(median(one))} (1 process) and ${formatNumber(median(two))} (2 processes) logs stored/s; ratio 2/1 ${formatNumber(median(ratios), 2)} (rounds ${ratios.map((ratio) => formatNumber(ratio, 2)).join(', ')})`,
    );
  }
} finally {
  await broker?.stop();
  await databases.stop();
  await rm(directory, { recursive: true, force: true });
}
process.exit(0);

interface Seeded {
  parkingId: number;
  client: { client_app_id: string; client_secret: string };
  /** An entrance box of the parking: its module id and key. */
  box: { moduleId: number; boxKey: string };
}

/** `parkbench admin ...` on the benchmark's database; its JSON output. */
async function admin(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>> {
  const child = startCli(['admin', ...args, '--json'], { ...database, ...env });
  const output: string[] = [];
  child.process.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.process.once('exit', resolve));
  if (code !== 0) throw new Error(`parkbench admin ${args.join(' ')} exited with ${String(code)}`);
  return JSON.parse(output.join('')) as Record<string, unknown>;
}

/** A sealed parking with the fleet's boxes (their accounts exported for mosquitto) and a client app. */
async function seed(): Promise<Seeded> {
  // Sealed: the MQTT side's responses are made by a simulated box sealing
  // ACCESS under the parking key (simulator/verified-responses.ts).
  const created = await admin([
    'parking',
    'create',
    '--name',
    'Processes bench',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.50',
    '--max-duration-minutes',
    '120',
    '--tries',
    '255',
    '--access',
    'sealed',
  ]);
  const parkingId = created.id as number;
  const fleetFile = join(directory, 'fleet.json');
  const client = (await admin(['client-app', 'create', '--name', 'processes-bench'])) as Seeded['client'];
  await provisionFleet(parkingId, fleetFile);
  const fleet = JSON.parse(await readFile(fleetFile, 'utf8')) as {
    module_id: number;
    parking_id: number;
    direction: string;
    box_key: string;
  }[];
  const entrance = fleet.find((box) => box.parking_id === parkingId && box.direction === 'entrance');
  if (entrance === undefined) throw new Error('the fleet has no entrance box in the first parking');
  return { parkingId, client, box: { moduleId: entrance.module_id, boxKey: entrance.box_key } };
}

interface Api {
  base: string;
  child: Child;
}

async function startApis(count: number, broker: MosquittoServer): Promise<Api[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const port = await freePort();
      // A client id of its own each time, and a clean session: a stopped
      // process's share is not this benchmark's business (bench processes
      // stop only once everything they were sent is stored).
      const clientId = `bench-api-${(apiNumber += 1)}`;
      const child = startCli(['api'], {
        ...database,
        HOST: '127.0.0.1',
        PORT: String(port),
        MQTT_URL: broker.url,
        MQTT_USERNAME: API_ACCOUNT.username,
        MQTT_PASSWORD: API_ACCOUNT.password,
        MQTT_CLIENT_ID: clientId,
        MQTT_SESSION_EXPIRY_SECONDS: '0',
        // A log line per request would cost more than the request.
        LOG_LEVEL: 'warn',
        LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000',
      });
      await broker.subscribed(clientId, '$share/');
      await waitForHttp(`http://127.0.0.1:${port}`);
      return { base: `http://127.0.0.1:${port}`, child };
    }),
  );
}

async function waitForHttp(base: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${base} did not answer within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A driver with a session on the parking: whose key the HTTP batches' logs answer. */
async function sessionFixture(broker: MosquittoServer, seeded: Seeded): Promise<BoxLogFixture & { token: string }> {
  const [api] = await startApis(1, broker);
  if (api === undefined) throw new Error('no API process');
  try {
    const post = async (path: string, body: unknown, token?: string): Promise<Record<string, unknown>> => {
      const response = await fetch(`${api.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    const email = 'bench.driver@parkbench.test';
    const password = 'correct horse battery';
    const user = await post('/api/car_driver', {
      api_car_driver_fo_user: {
        email,
        password,
        password_confirmation: password,
        first_name: 'Bench',
        last_name: 'Driver',
        phone: '+33 1 23 45 67 89',
      },
      ...seeded.client,
    });
    const login = await post('/api/oauth/token', {
      grant_type: 'password',
      username: email,
      password,
      ...seeded.client,
    });
    const token = login.access_token as string;
    const opened = await post(
      '/api/car_driver/parking_sessions',
      { parking_session: { secured_parking_id: seeded.parkingId } },
      token,
    );
    const key = opened.smart_key as { id: number; access_command: string };
    return {
      token,
      userId: user.id as number,
      keyId: key.id,
      command: key.access_command,
      parkingId: seeded.parkingId,
      moduleId: seeded.box.moduleId,
      boxKey: seeded.box.boxKey,
    };
  } finally {
    await api.child.stop();
  }
}

/** Logs stored per second over HTTP: autocannon's connections spread over the processes. */
async function httpRate(bases: readonly string[], fixture: BoxLogFixture & { token: string }): Promise<number> {
  const runs = await Promise.all(
    bases.map((base) =>
      autocannon({
        url: `${base}/api/box_logs`,
        connections: Math.floor(CONNECTIONS / bases.length),
        duration: seconds,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => ({
              ...request,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${fixture.token}` },
              body: boxLogBatch(fixture, BATCH),
            }),
          },
        ],
      }),
    ),
  );
  const failures = runs.reduce((sum, run) => sum + run.errors + run.timeouts + run.non2xx, 0);
  if (failures > 0) console.log(`  (${failures} requests failed or not 201)`);
  const stored = runs.reduce((sum, run) => sum + run['2xx'], 0) * BATCH;
  return stored / seconds;
}

/**
 * Logs stored per second from MQTT: from the first publish until the
 * database holds them all. Each run takes boxes of its own (a fleet
 * provisioned now, its accounts given to mosquitto), whose responses start
 * from box_seq 1: another run's boxes' would be duplicates.
 */
async function mqttRate(broker: MosquittoServer, parkingId: number): Promise<number> {
  const fleetFile = join(directory, `fleet-${(fleetNumber += 1)}.json`);
  await provisionFleet(parkingId, fleetFile);
  broker.reload();
  const store = await openStore(shared.config, { onIdleError: () => undefined, maxConnections: 1 });
  const count = async (): Promise<number> => {
    const row = await store.kysely
      .selectFrom('box_logs')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('verified', '=', 1)
      .where('source', '=', 'mqtt')
      .executeTakeFirstOrThrow();
    // PostgreSQL's count(*) is a bigint, which pg hands over as a string.
    return Number(row.count);
  };
  const child = startTsx(worker, [
    '--mode',
    'boxes',
    '--url',
    broker.url,
    '--fleet',
    fleetFile,
    '--per-box',
    String(perBox),
  ]);
  try {
    const before = await count();
    // The worker makes its responses and connects its boxes first: not the API's time.
    await child.line(/^publishing$/);
    const started = performance.now();
    const expected = boxes * perBox;
    const deadlineMs = Number(process.env.PERF_MQTT_DEADLINE_MS ?? 120_000);
    const deadline = started + deadlineMs;
    while ((await count()) - before < expected) {
      if (performance.now() > deadline) {
        // mosquitto says when it dropped messages queued for a client ("Outgoing messages are being dropped").
        const warnings = broker
          .log()
          .split('\n')
          .filter((line) => /dropped|Warning|Error/i.test(line) && !/run as root/.test(line));
        throw new Error(
          `MQTT: ${(await count()) - before} of ${expected} responses stored within ${deadlineMs} ms${warnings.length > 0 ? `; mosquitto:\n${warnings.join('\n')}` : ''}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return expected / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
    await child.stop();
  }
}

/** `admin fleet provision` (new parkings like the first past its 32 boxes), then mosquitto's files again. */
async function provisionFleet(parkingId: number, fleetFile: string): Promise<void> {
  await admin([
    'fleet',
    'provision',
    '--parking',
    String(parkingId),
    '--count',
    String(boxes),
    '--out',
    fleetFile,
    '--create-parkings',
  ]);
  await admin(['mqtt-acl', '--format', 'mosquitto', '--out', join(directory, 'mosquitto')], {
    MQTT_USERNAME: API_ACCOUNT.username,
    MQTT_PASSWORD: API_ACCOUNT.password,
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
