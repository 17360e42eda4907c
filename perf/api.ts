// `npm run perf:api`: the API under autocannon on 127.0.0.1, each figure
// next to a baseline measured in the same run (the machine may be shared).
// Part 1: token issuance (password grant; scrypt of the password dominates on purpose) and
// an authenticated no-op route against a bare route with the same response.
// Part 2: session creation (each request by a new driver) at a fixed 200
// requests per second and at the maximum rate, against a bare route
// answering the same JSON, after 2 s of each uncounted (the server warms). Part 3: box log ingestion, batches of 50 verified
// logs, against a bare route parsing the same JSON.
//
// The server runs in a child process (this file with --serve), so that the
// load generator does not share its event loop.
//
// Each comparison alternates its bare and real cases for some rounds, and its
// verdict is the median of the per-round ratios: the two runs of a round are
// back to back, so a burst of load from a neighbour on this shared VM spoils
// one round rather than the figure. The ratio of the means is printed too.
// The bearer comparison, whose requests cost ~20 µs, takes many 1-second
// rounds: its effect is a few percent and the VM's bursts are ±20%.
//
//   PERF_SECONDS (default 5) per case, PERF_CONNECTIONS (default 50),
//   PERF_ROUNDS (default 8) rounds of the box log comparison,
//   PERF_AUTH_ROUNDS (default 24) 1-second rounds of the bearer comparison,
//   PERF_PARTS (default auth,sessions,box-logs) the parts to run,
//   PERF_STORE (default sqlite) or postgres: the API on a PostgreSQL server
//   started for the run (as durable as the SQLite store), the box logs then
//   also against the floor, PostgreSQL's own insert of the same rows in
//   statements of 50 from 4 connections, measured on that server,
//   PERF_CPU_PROF=<dir>: the servers write V8 CPU profiles there (node
//   --cpu-prof; open them in Chrome's DevTools), to see where a case's CPU goes.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { hashIssuedSecret, hashSecret } from '../api/auth/secrets.js';
import { configWith, parsePostgresUrl } from '../api/config/index.js';
import { appLogger } from '../api/app-logger.js';
import { createService } from '../api/service.js';
import { ClientAppRepository } from '../api/auth/client-apps-repository.js';
import { UserRepository } from '../api/auth/users-repository.js';
import { seedDrivers, seedParking } from './support/api-seed.js';
import { boxLogBatch, type BoxLogFixture } from './support/box-log-batches.js';
import { benchDatabases, benchStoreOf, type BenchDatabases } from './support/bench-databases.js';

const SECONDS = Number(process.env.PERF_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.PERF_CONNECTIONS ?? 50);
const PART_NAMES = ['auth', 'sessions', 'box-logs'] as const;
const PARTS = new Set((process.env.PERF_PARTS ?? PART_NAMES.join(',')).split(',').map((part) => part.trim()));
const unknownParts = [...PARTS].filter((part) => !(PART_NAMES as readonly string[]).includes(part));
if (unknownParts.length > 0) {
  console.error(`PERF_PARTS: unknown part ${unknownParts.join(', ')} (known: ${PART_NAMES.join(', ')})`);
  process.exit(2);
}
/** Bare and real runs alternate this many times. */
const ROUNDS = Number(process.env.PERF_ROUNDS ?? 8);
const AUTH: Rounds = { rounds: Number(process.env.PERF_AUTH_ROUNDS ?? 24), seconds: 1 };
const STORE = benchStoreOf(process.env.PERF_STORE);

interface Fixture {
  base: string;
  scryptLog2N: number;
  client: { client_app_id: string; client_secret: string };
  driver: { email: string; password: string };
  accessToken: string;
  parkingId: number;
  /** One token per driver who has no session yet: session creation takes the next. */
  sessionTokens: string[];
  boxLogs: BoxLogFixture;
}

/** Box logs per POST in the ingestion case. */
const BOX_LOG_BATCH = 50;

function boxLogRequest(
  f: Fixture,
  path: string,
  authorized: boolean,
): Omit<autocannon.Options, 'url'> & { path: string } {
  return {
    path,
    requests: [
      {
        method: 'POST',
        path,
        setupRequest: (request) => ({
          ...request,
          headers: {
            'content-type': 'application/json',
            ...(authorized ? { authorization: `Bearer ${f.accessToken}` } : {}),
          },
          body: boxLogBatch(f.boxLogs, BOX_LOG_BATCH),
        }),
      },
    ],
  };
}

/** Drivers seeded for session creation (every request takes a new one). */
const SESSION_DRIVERS = PARTS.has('sessions') ? Number(process.env.PERF_SESSION_DRIVERS ?? 40_000) : 0;
/** The fixed rate of the session latency case, requests per second. */
const SESSION_RATE = 200;
/** Seconds of each session case run before the counted ones, at SESSION_RATE. */
const WARM_UP_SECONDS = 2;
let nextSessionToken = 0;

function sessionBody(fixture: Fixture): string {
  return JSON.stringify({ parking_session: { secured_parking_id: fixture.parkingId } });
}

interface Case {
  name: string;
  /** Fewer connections where each request is long (scrypt): more would only queue. */
  connections?: number;
  request: (fixture: Fixture) => Omit<autocannon.Options, 'url'> & { path: string };
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** Server CPU time (user + system) per request, microseconds. */
  cpuPerRequest: number;
  /** Of which user time: the server's own code (system time is mostly the
   * socket calls, which swing with the VM's scheduling). */
  userCpuPerRequest: number;
}

const BENCH_USER = {
  id: 1,
  email: 'bench@example.com',
  first_name: 'Bench',
  last_name: 'Driver',
  phone: '+1 555 0100',
};

const CASES: Record<string, Case> = {
  // The baseline gets the very request /me gets, Authorization header
  // included (ignored): the difference is then only the server's work to
  // authenticate. The header's own cost (bytes to parse) is shown apart.
  bare: {
    name: 'GET bare route (same request and JSON, no auth)',
    request: (f) => ({ path: '/bench/bare', headers: { authorization: `Bearer ${f.accessToken}` } }),
  },
  bareWithoutHeader: {
    name: 'GET bare route without the Authorization header',
    request: () => ({ path: '/bench/bare' }),
  },
  me: {
    name: 'GET /api/car_driver/me (bearer)',
    request: (f) => ({ path: '/api/car_driver/me', headers: { authorization: `Bearer ${f.accessToken}` } }),
  },
  sessionBare: {
    name: 'POST bare route (same body and JSON, no work)',
    request: (f) => ({
      path: '/bench/bare-session',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sessionBody(f),
    }),
  },
  session: {
    name: 'POST /api/car_driver/parking_sessions (new driver each)',
    request: (f) => ({
      path: '/api/car_driver/parking_sessions',
      requests: [
        {
          method: 'POST',
          path: '/api/car_driver/parking_sessions',
          setupRequest: (request) => {
            const token = f.sessionTokens[nextSessionToken++ % f.sessionTokens.length] ?? '';
            return {
              ...request,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: sessionBody(f),
            };
          },
        },
      ],
    }),
  },
  boxLogsBare: {
    name: `POST bare route (same ${BOX_LOG_BATCH}-log JSON parsed, same answer)`,
    request: (f) => boxLogRequest(f, '/bench/bare-box-logs', false),
  },
  boxLogs: {
    name: `POST /api/box_logs (${BOX_LOG_BATCH} verified logs)`,
    request: (f) => boxLogRequest(f, '/api/box_logs', true),
  },
  token: {
    name: 'POST /api/oauth/token (password)',
    connections: 8,
    request: (f) => ({
      path: '/api/oauth/token',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'password',
        username: f.driver.email,
        password: f.driver.password,
        ...f.client,
      }),
    }),
  },
};

/** The child: builds the app, seeds it, listens, reports the fixture. */
async function serve(logLevel: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'parkbench-bench-'));
  // The parent's database on PostgreSQL (PERF_STORE=postgres), else a file of this process.
  const databaseUrl = process.env.DATABASE_URL;
  const config = configWith({
    databasePath: join(dir, 'bench.sqlite'),
    ...(databaseUrl === undefined ? {} : { databaseUrl: parsePostgresUrl(databaseUrl) }),
    logLevel,
    loginMaxFailuresPerAddress: 1e6,
  });
  // Logs go to the child's stdout, which the parent sends to /dev/null.
  const { app, ctx } = await createService(config, {
    logger: appLogger(logLevel === 'silent' ? false : { level: logLevel }),
  });
  // The baseline: a route on the same server (same hooks, same serializer)
  // answering the same JSON without authentication.
  app.get('/bench/bare', { schema: { response: { 200: { $ref: 'User#' } } } }, () => BENCH_USER);
  // The session baseline: the same JSON body parsed, the same response JSON
  // (a canned session) serialized by the same schema, nothing else.
  const canned: { session?: unknown } = {};
  app.post('/bench/bare-session', { schema: { response: { 201: { $ref: 'SessionResponse#' } } } }, (request, reply) => {
    // eslint-disable-next-line @typescript-eslint/no-meaningless-void-operator -- the read is the baseline's work (the real route reads it), `void` drops its value
    void (request.body as { parking_session?: unknown }).parking_session;
    return reply.status(201).send(canned.session);
  });
  // The box log baseline: the same JSON parsed by fastify, an answer of the
  // same shape, no validation, verification or storage.
  app.post('/bench/bare-box-logs', (request, reply) => {
    const logs = (request.body as { box_logs: unknown[] }).box_logs;
    return reply.status(201).send({ box_logs: logs.map((_, id) => ({ id, verified: true, duplicate: false })) });
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const client = { client_app_id: 'bench-client', client_secret: 'bench-secret' };
  const driver = { email: BENCH_USER.email, password: 'bench password' };
  await new ClientAppRepository(ctx.store).insert(
    'bench',
    client.client_app_id,
    hashIssuedSecret(client.client_secret),
    Date.now(),
  );
  await new UserRepository(ctx.store).insert(
    {
      email: driver.email,
      passwordHash: await hashSecret(driver.password, config.scryptLog2N),
      firstName: BENCH_USER.first_name,
      lastName: BENCH_USER.last_name,
      phone: BENCH_USER.phone,
    },
    Date.now(),
  );
  const response = await fetch(`${address}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'password', username: driver.email, password: driver.password, ...client }),
  });
  if (response.status !== 200) throw new Error(`bench login failed: ${await response.text()}`);
  const { access_token: accessToken } = (await response.json()) as { access_token: string };
  const parking = await seedParking(ctx, 7_000_000);
  const clientRow = await new ClientAppRepository(ctx.store).findByClientAppId(client.client_app_id);
  const sessionTokens = (await seedDrivers(ctx, clientRow?.id ?? 1, SESSION_DRIVERS, 'session')).map(
    ([, token]) => token,
  );
  const sample = await fetch(`${address}/api/car_driver/parking_sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ parking_session: { secured_parking_id: parking.id } }),
  });
  if (sample.status !== 201) throw new Error(`bench session failed: ${await sample.text()}`);
  canned.session = await sample.json();
  const sampleKey = (canned.session as { smart_key: { id: number; access_command: string } }).smart_key;
  const entrance = parking.boxes[0];
  if (!entrance) throw new Error('bench parking without boxes');
  const boxLogs: BoxLogFixture = {
    userId: 1,
    keyId: sampleKey.id,
    command: sampleKey.access_command,
    parkingId: parking.id,
    moduleId: entrance.moduleId,
    boxKey: entrance.boxKey,
  };
  const fixture: Fixture = {
    base: address,
    scryptLog2N: config.scryptLog2N,
    client,
    driver,
    accessToken,
    parkingId: parking.id,
    sessionTokens,
    boxLogs,
  };
  // The seeding wrote megabytes to the WAL: checkpoint them now, or the first
  // commit measured pays for copying them all into the database file.
  if (ctx.store.dialect === 'sqlite') ctx.store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  process.send?.(fixture);
  // The parent asks for CPU time around each case: server CPU per request is
  // steadier than throughput on a shared machine.
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpuMicros: { user, total: user + system } });
    }
  });
  process.once('disconnect', () => {
    void app.close().then(() => rmSync(dir, { recursive: true, force: true }));
  });
}

interface CpuMicros {
  user: number;
  total: number;
}

function serverCpuMicros(child: ChildProcess): Promise<CpuMicros> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message === 'object' && message !== null && 'cpuMicros' in message) {
        child.off('message', onMessage);
        resolve((message as { cpuMicros: CpuMicros }).cpuMicros);
      }
    };
    child.on('message', onMessage);
    child.send('cpu');
  });
}

/** node's flags for PERF_CPU_PROF: the profile is written when the server exits. */
function cpuProfileFlags(): string[] {
  const dir = process.env.PERF_CPU_PROF;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}

async function startServer(
  logLevel: string,
  databases: BenchDatabases,
): Promise<{ fixture: Fixture; child: ChildProcess }> {
  // SQLite: the child makes its file; PostgreSQL: a new database on the run's server.
  const env = databases.store === 'postgres' ? (await databases.fresh(`api_${logLevel}`)).env : {};
  const child = fork(new URL(import.meta.url).pathname, ['--serve', logLevel], {
    env: { ...process.env, ...env },
    execArgv: ['--import', 'tsx', ...cpuProfileFlags()],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const fixture = await new Promise<Fixture>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Fixture));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${String(code)}`)));
  });
  return { fixture, child };
}

/** Lets the server close its database, and waits for it to exit: the
 * PostgreSQL server stops after, so no connection of the child is cut. */
async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  child.disconnect();
  await exited;
}

interface RunOptions {
  /** A fixed rate, requests per second (default: as fast as it goes). */
  overallRate?: number;
  seconds?: number;
}

async function run(
  fixture: Fixture,
  child: ChildProcess,
  key: string,
  { overallRate, seconds = SECONDS }: RunOptions = {},
): Promise<Figures> {
  const spec = CASES[key];
  if (!spec) throw new Error(`no case ${key}`);
  // At a fixed rate a few connections suffice; more would only wait.
  const connections = overallRate === undefined ? (spec.connections ?? CONNECTIONS) : 10;
  const { path, ...options } = spec.request(fixture);
  const cpuBefore = await serverCpuMicros(child);
  const result = await autocannon({
    ...options,
    url: `${fixture.base}${path}`,
    connections,
    duration: seconds,
    ...(overallRate === undefined ? {} : { overallRate }),
  });
  const cpuAfter = await serverCpuMicros(child);
  const requests = Math.max(result.requests.total, 1);
  return {
    cpuPerRequest: (cpuAfter.total - cpuBefore.total) / requests,
    userCpuPerRequest: (cpuAfter.user - cpuBefore.user) / requests,
    name: overallRate === undefined ? spec.name : `${spec.name} at ${overallRate} req/s`,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

async function scryptMs(log2N: number, samples = 10): Promise<number> {
  await hashSecret('warm up', log2N);
  const start = performance.now();
  for (let i = 0; i < samples; i += 1) await hashSecret(`secret ${i}`, log2N);
  return (performance.now() - start) / samples;
}

function mean(figures: Figures[]): Figures {
  const first = figures[0];
  if (!first) throw new Error('no figures');
  const avg = (pick: (f: Figures) => number) => figures.reduce((sum, f) => sum + pick(f), 0) / figures.length;
  return {
    name: first.name,
    rps: avg((f) => f.rps),
    p50: avg((f) => f.p50),
    p99: avg((f) => f.p99),
    failures: figures.reduce((sum, f) => sum + f.failures, 0),
    cpuPerRequest: avg((f) => f.cpuPerRequest),
    userCpuPerRequest: avg((f) => f.userCpuPerRequest),
  };
}

function print(rows: Figures[]): void {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  console.log(line(['case', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'of which user', 'failures']));
  console.log(line(['---', '---:', '---:', '---:', '---:', '---:', '---:']));
  for (const row of rows) {
    console.log(
      line([
        row.name,
        row.rps.toFixed(0),
        row.p50.toFixed(1),
        row.p99.toFixed(1),
        row.cpuPerRequest.toFixed(1),
        row.userCpuPerRequest.toFixed(1),
        String(row.failures),
      ]),
    );
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** A comparison's figures: the mean of each case, and real / bare throughput per round. */
interface Comparison {
  bare: Figures;
  real: Figures;
  ratios: number[];
}

interface Rounds {
  rounds: number;
  seconds: number;
}

/** Runs the bare and the real case back to back, `rounds` times, so drift hits
 * both alike; every other round the real case goes first, so that what a run
 * leaves behind (garbage, a warm or cold cache) does not always fall on the
 * same case. `extra` cases (shown, not compared) join each round. */
async function compare(
  fixture: Fixture,
  child: ChildProcess,
  [bareKey, realKey]: [string, string],
  { rounds, seconds }: Rounds,
  extra: string[] = [],
): Promise<Comparison & { extra: Figures[] }> {
  const bare: Figures[] = [];
  const real: Figures[] = [];
  const extras = extra.map((): Figures[] => []);
  for (let round = 0; round < rounds; round += 1) {
    if (round % 2 === 0) {
      bare.push(await run(fixture, child, bareKey, { seconds }));
      real.push(await run(fixture, child, realKey, { seconds }));
    } else {
      real.push(await run(fixture, child, realKey, { seconds }));
      bare.push(await run(fixture, child, bareKey, { seconds }));
    }
    for (const [i, key] of extra.entries()) extras[i]?.push(await run(fixture, child, key, { seconds }));
  }
  return {
    bare: mean(bare),
    real: mean(real),
    ratios: real.map((figures, i) => figures.rps / (bare[i]?.rps ?? Number.NaN)),
    extra: extras.map(mean),
  };
}

/** "0.912 (rounds: 0.90 0.93 ...; ratio of the means 0.905)" */
function describeRatio({ bare, real, ratios }: Comparison): string {
  return `${median(ratios).toFixed(3)} (median of the rounds: ${ratios.map((r) => r.toFixed(2)).join(' ')}; ratio of the means ${(real.rps / bare.rps).toFixed(3)})`;
}

function printAuthCost(comparison: Comparison, withoutHeader?: Figures): void {
  const { bare, real: me, ratios } = comparison;
  const cost = 1 - median(ratios);
  const verdict = cost < 0.1 ? 'MET' : 'NOT MET';
  console.log(
    `bearer auth: ${describeRatio(comparison)} of the bare route's throughput: cost ${(cost * 100).toFixed(1)}% (target under 10%: ${verdict})`,
  );
  const cpuCost = me.cpuPerRequest / bare.cpuPerRequest - 1;
  console.log(
    `bearer auth: +${(me.cpuPerRequest - bare.cpuPerRequest).toFixed(1)} µs of server CPU a request (+${(cpuCost * 100).toFixed(1)}%), ` +
      `of which user time +${(me.userCpuPerRequest - bare.userCpuPerRequest).toFixed(1)} µs (+${((me.userCpuPerRequest / bare.userCpuPerRequest - 1) * 100).toFixed(1)}%)`,
  );
  if (withoutHeader) {
    console.log(
      `the Authorization header itself (bytes the server parses, auth or not): the bare route without it ${withoutHeader.rps.toFixed(0)} req/s, ${withoutHeader.cpuPerRequest.toFixed(1)} µs a request`,
    );
  }
}

/** Session creation at SESSION_RATE and at the maximum rate, each after its bare baseline. */
async function compareSessions(fixture: Fixture, child: ChildProcess): Promise<void> {
  console.log(
    `session creation (each request by a new driver of ${fixture.sessionTokens.length.toLocaleString('en')}), server without request logs:\n`,
  );
  // Both routes warm first, uncounted: the first requests of a fresh server
  // compile its code (V8, the serializers, the prepared statements), which
  // would count in the fixed rate's p99 and CPU a request, the first case run.
  await run(fixture, child, 'sessionBare', { overallRate: SESSION_RATE, seconds: WARM_UP_SECONDS });
  await run(fixture, child, 'session', { overallRate: SESSION_RATE, seconds: WARM_UP_SECONDS });
  const bareFixed = await run(fixture, child, 'sessionBare', { overallRate: SESSION_RATE });
  const fixed = await run(fixture, child, 'session', { overallRate: SESSION_RATE });
  const bareMax = await run(fixture, child, 'sessionBare');
  const max = await run(fixture, child, 'session');
  print([bareFixed, fixed, bareMax, max]);
  console.log('');
  const verdict = fixed.p99 < 20 ? 'MET' : 'NOT MET';
  console.log(
    `session creation at ${SESSION_RATE} req/s: p50 ${fixed.p50.toFixed(1)} ms, p99 ${fixed.p99.toFixed(1)} ms (target p99 under 20 ms: ${verdict}); bare route p99 ${bareFixed.p99.toFixed(1)} ms`,
  );
  console.log(
    `session creation at the maximum rate: ${max.rps.toFixed(0)} req/s, ${(max.rps / bareMax.rps).toFixed(3)} of the bare route's ${bareMax.rps.toFixed(0)} req/s (p99 ${max.p99.toFixed(1)} ms)`,
  );
  if (nextSessionToken > fixture.sessionTokens.length)
    console.log(
      `warning: ${nextSessionToken} requests for ${fixture.sessionTokens.length} drivers: the later ones were 422 (set PERF_SESSION_DRIVERS)`,
    );
  console.log('');
}

/** Box log ingestion against the bare route, alternating ROUNDS times of SECONDS. */
async function compareBoxLogs(fixture: Fixture, child: ChildProcess, databases: BenchDatabases): Promise<void> {
  console.log(
    `box log ingestion: batches of ${BOX_LOG_BATCH} verified logs, one token, server without request logs:\n`,
  );
  const comparison = await compare(fixture, child, ['boxLogsBare', 'boxLogs'], { rounds: ROUNDS, seconds: SECONDS });
  const { bare: bareMean, real: ingestMean, ratios } = comparison;
  print([bareMean, ingestMean]);
  console.log('');
  const stored = ingestMean.rps * BOX_LOG_BATCH;
  const bareLogs = bareMean.rps * BOX_LOG_BATCH;
  console.log(
    `box logs stored: ${stored.toFixed(0)} logs/s, p99 ${ingestMean.p99.toFixed(1)} ms a batch (target at least 20,000 logs/s: ${stored >= 20_000 ? 'MET' : 'NOT MET'})`,
  );
  console.log(
    `against the bare route's ${bareLogs.toFixed(0)} logs/s parsed (p99 ${bareMean.p99.toFixed(1)} ms): ${describeRatio(comparison)} (target at least 0.40: ${median(ratios) >= 0.4 ? 'MET' : 'NOT MET'})\n`,
  );
  const floor = await databases.floor(BOX_LOG_BATCH, 4, SECONDS);
  if (floor !== undefined)
    console.log(
      `against PostgreSQL's own insert of the same rows (${floor.case}, 4 connections, the floor): ${floor.rowsPerSecond.toFixed(0)} rows/s; the API stores ${(stored / floor.rowsPerSecond).toFixed(2)} of it\n`,
    );
}

async function main(): Promise<void> {
  console.log(
    `parkbench API benchmark: autocannon -c ${CONNECTIONS}, 127.0.0.1, node ${process.version}, on ${STORE === 'postgres' ? 'PostgreSQL' : 'SQLite'}; ${SECONDS} s a case; ` +
      `bearer: ${AUTH.rounds} rounds of ${AUTH.seconds} s; box logs: ${ROUNDS} rounds of ${SECONDS} s\n`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'parkbench-bench-'));
  const databases = await benchDatabases(STORE, dir);
  try {
    await measureParts(databases);
  } finally {
    await databases.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureParts(databases: BenchDatabases): Promise<void> {
  // 1. Without request logs: the cost of authentication alone.
  const quiet = await startServer('silent', databases);
  try {
    if (PARTS.has('auth')) {
      // Measured here, in the load process, while the server idles.
      const hashMs = await scryptMs(quiet.fixture.scryptLog2N);
      console.log(
        `scrypt (N=2^${quiet.fixture.scryptLog2N}, r=8, p=1): ${hashMs.toFixed(1)} ms per hash, one at a time; a password grant costs one (the password; client secrets are SHA-256)\n`,
      );
      console.log('server without request logs (LOG_LEVEL=silent):\n');
      const auth = await compare(quiet.fixture, quiet.child, ['bare', 'me'], AUTH, ['bareWithoutHeader']);
      const token = await run(quiet.fixture, quiet.child, 'token');
      print([auth.bare, auth.real, ...auth.extra, token]);
      console.log('');
      printAuthCost(auth, auth.extra[0]);
      console.log(
        `token issuance: ${token.rps.toFixed(1)} tokens/s with ${CASES.token?.connections ?? CONNECTIONS} connections (p50 ${token.p50.toFixed(0)} ms)\n`,
      );
    }
    if (PARTS.has('sessions')) await compareSessions(quiet.fixture, quiet.child);
    if (PARTS.has('box-logs')) await compareBoxLogs(quiet.fixture, quiet.child, databases);
  } finally {
    await stopServer(quiet.child);
  }
  if (!PARTS.has('auth')) return;

  // 2. As `parkbench api` runs by default: one JSON log line per request and response.
  const logging = await startServer('info', databases);
  try {
    console.log('server as `parkbench api` runs it (LOG_LEVEL=info, logs to /dev/null):\n');
    const auth = await compare(logging.fixture, logging.child, ['bare', 'me'], AUTH);
    print([auth.bare, auth.real]);
    console.log('');
    printAuthCost(auth);
  } finally {
    await stopServer(logging.child);
  }
}

const serveAt = process.argv.indexOf('--serve');
if (serveAt >= 0) await serve(process.argv[serveAt + 1] ?? 'silent');
else await main();
