// npm run perf:ingest [-- --boxes 200 --per-box 250 --bare-count 50000 --stream-rounds 2 --capture-rounds 2 --store sqlite|postgres]
//
// Box responses -> stored box logs per second, through `parkbench api` (its
// own process: the embedded aedes broker and the ingestion, which commits
// each box log before the publisher's PUBACK). The publishers are many
// simulated boxes' accounts in a second process, each publishing verified
// responses made beforehand by a SimulatedBox, at QoS 1, as fast as the
// broker acknowledges them. Baseline, in the same run: a bare aedes broker in
// its own process and two plain clients (one publisher, one subscriber, QoS
// 1). Targets: at least 10,000 box logs stored per second; goal:
// half the bare broker's rate.
// Then the event stream: the same ingestion without and with three
// clients of GET /api/operator/events attached (real SSE connections from
// this process, reading every byte), alternating, --stream-rounds times each:
// target, at least 0.9 of the rate without them.
// Then the capture ring (CAPTURE_RING_SECONDS, api/capture/): the same
// ingestion with the ring off (0) and on (300, its default), alternating,
// --capture-rounds times each: target, at least 0.95 of the rate with it off.
// `--store postgres`: the API on a PostgreSQL server started for
// the run (as durable as the SQLite store), the floor measured on it in the
// same run: the server's own insert of the same rows, 500 a statement (a
// group of messages is one statement); target 10,000 stored/s there too.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { freePort } from '../lib/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../api/db/open-store.js';
import { ParkingRepository } from '../api/parkings/repository.js';
import { randomKeyHex } from '../api/auth/secrets.js';
import { provisionFleet } from '../api/boxes/fleet.js';
import { formatNumber, startCli, startTsx } from './support/processes.js';
import { addOperator } from '../api/operators/accounts.js';
import { attachStreamClients, type StreamClients } from './support/stream-clients.js';
import { benchDatabases, benchStoreOf, type BenchDatabase } from './support/bench-databases.js';

const boxes = Number(argument('--boxes') ?? 200);
const perBox = Number(argument('--per-box') ?? 250);
const bareCount = Number(argument('--bare-count') ?? 50_000);
const streamRounds = Number(argument('--stream-rounds') ?? 2);
const captureRounds = Number(argument('--capture-rounds') ?? 2);
const STREAM_CLIENTS = 3;
const worker = new URL('./support/ingest-worker.ts', import.meta.url);
const directory = await mkdtemp(join(tmpdir(), 'pb-bench-ingest-'));
const databases = await benchDatabases(benchStoreOf(argument('--store')), directory);

try {
  console.log(
    `ingestion benchmark: ${boxes} simulated boxes x ${perBox} verified responses, QoS 1, on ${databases.store === 'postgres' ? 'PostgreSQL' : 'SQLite'}, 2-core machine`,
  );
  const bare = await bareBroker();
  console.log(
    `baseline: bare aedes, 1 publisher -> 1 subscriber, QoS 1: ${formatNumber(bare.rate)} msg/s (${formatNumber(bare.messages)} messages in ${formatNumber(bare.seconds, 2)} s)`,
  );
  const ingest = await throughApi();
  console.log(
    `ingest:   parkbench api (embedded broker + ingestion): ${formatNumber(ingest.rate)} box logs stored/s (${formatNumber(ingest.messages)} from ${boxes} boxes in ${formatNumber(ingest.seconds, 2)} s; ${formatNumber(ingest.stored)} verified logs in the database)`,
  );
  const ratio = ingest.rate / bare.rate;
  console.log(`ratio:    ${formatNumber(ratio, 2)} of the bare broker's QoS 1 rate`);
  console.log(
    `targets:  10,000 stored/s: ${ingest.rate >= 10_000 ? 'met' : 'MISSED'}; half the bare broker: ${ratio >= 0.5 ? 'met' : 'MISSED'}; every response stored: ${ingest.stored === ingest.messages ? 'yes' : 'NO'}`,
  );
  const floor = await databases.floor(500, 1, 3);
  if (floor !== undefined)
    console.log(
      `floor:    PostgreSQL's own insert of the same rows, 500 a statement, 1 connection: ${formatNumber(floor.rowsPerSecond)} rows/s; ingest ${formatNumber(ingest.rate / floor.rowsPerSecond, 2)} of it`,
    );
  if (streamRounds > 0) await withAndWithoutStreams();
  if (captureRounds > 0) await withAndWithoutCapture();
} finally {
  await databases.stop();
  await rm(directory, { recursive: true, force: true });
}
process.exit(0);

interface Rate {
  messages: number;
  seconds: number;
  rate: number;
}

async function bareBroker(): Promise<Rate> {
  const broker = startTsx(new URL('./support/broker.ts', import.meta.url));
  try {
    const port = Number((await broker.line(/^listening \d+$/, 30_000)).split(' ')[1]);
    return await runWorker(['--mode', 'bare', '--url', `mqtt://127.0.0.1:${port}`, '--count', String(bareCount)]);
  } finally {
    await broker.stop();
  }
}

/** The same ingestion run without and with STREAM_CLIENTS event-stream clients, alternating. */
async function withAndWithoutStreams(): Promise<void> {
  const without: number[] = [];
  const withStreams: number[] = [];
  const cpuWithout: number[] = [];
  const cpuWith: number[] = [];
  for (let round = 0; round < streamRounds; round++) {
    const bare = await throughApi(0, `round-${round}-without`);
    without.push(bare.rate);
    cpuWithout.push(bare.cpuUsPerLog);
    console.log(
      `stream:   without clients: ${formatNumber(bare.rate)} box logs stored/s, ${formatNumber(bare.cpuUsPerLog)} µs of API CPU a log`,
    );
    const streamed = await throughApi(STREAM_CLIENTS, `round-${round}-with`);
    withStreams.push(streamed.rate);
    cpuWith.push(streamed.cpuUsPerLog);
    console.log(
      `stream:   with ${STREAM_CLIENTS} clients:  ${formatNumber(streamed.rate)} box logs stored/s, ${formatNumber(streamed.cpuUsPerLog)} µs of API CPU a log (${streamed.streams ?? ''})`,
    );
  }
  const ratio = median(withStreams) / median(without);
  console.log(
    `stream:   medians ${formatNumber(median(withStreams))} with, ${formatNumber(median(without))} without: ratio ${formatNumber(ratio, 2)} (target 0.9: ${ratio >= 0.9 ? 'met' : 'MISSED'}); pairs ${withStreams.map((rate, index) => formatNumber(rate / (without[index] ?? rate), 2)).join(', ')}`,
  );
  console.log(
    `stream:   API CPU a log, medians: ${formatNumber(median(cpuWith))} µs with, ${formatNumber(median(cpuWithout))} µs without (ratio of rates the CPU allows: ${formatNumber(median(cpuWithout) / median(cpuWith), 2)})`,
  );
}

/** The same ingestion with the capture ring off and on, alternating, the off run first in each round. */
async function withAndWithoutCapture(): Promise<void> {
  const off: number[] = [];
  const on: number[] = [];
  const cpuOff: number[] = [];
  const cpuOn: number[] = [];
  for (let round = 0; round < captureRounds; round++) {
    for (const seconds of ['0', '300']) {
      const run = await throughApi(0, `capture-${round}-${seconds}`, { CAPTURE_RING_SECONDS: seconds });
      (seconds === '0' ? off : on).push(run.rate);
      (seconds === '0' ? cpuOff : cpuOn).push(run.cpuUsPerLog);
      console.log(
        `capture:  ring ${seconds === '0' ? 'off' : 'on '} (CAPTURE_RING_SECONDS=${seconds}): ${formatNumber(run.rate)} box logs stored/s, ${formatNumber(run.cpuUsPerLog)} µs of API CPU a log`,
      );
    }
  }
  const ratio = median(on) / median(off);
  const pairs = on.map((rate, index) => rate / (off[index] ?? rate));
  console.log(
    `capture:  medians ${formatNumber(median(on))} on, ${formatNumber(median(off))} off: ratio ${formatNumber(ratio, 2)}; median of the rounds' ratios ${formatNumber(median(pairs), 2)} (target 0.95: ${median(pairs) >= 0.95 ? 'met' : 'MISSED'}); pairs ${pairs.map((pair) => formatNumber(pair, 2)).join(', ')} (spread ${formatNumber(Math.min(...pairs), 2)}..${formatNumber(Math.max(...pairs), 2)})`,
  );
  const cpuPairs = cpuOn.map((cpu, index) => (cpuOff[index] ?? cpu) / cpu);
  console.log(
    `capture:  API CPU a log, medians: ${formatNumber(median(cpuOn))} µs on, ${formatNumber(median(cpuOff))} µs off (ratio of rates the CPU allows: ${formatNumber(median(cpuOff) / median(cpuOn), 2)}; median of the rounds' ${formatNumber(median(cpuPairs), 2)}, pairs ${cpuPairs.map((pair) => formatNumber(pair, 2)).join(', ')})`,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function throughApi(
  streamClients = 0,
  name = 'bench',
  env: NodeJS.ProcessEnv = {},
): Promise<Rate & { stored: number; cpuUsPerLog: number; streams?: string }> {
  const database = await databases.fresh(name);
  const mqttPort = await freePort();
  const httpPort = await freePort();
  const fleetFile = join(directory, `${name}-fleet.json`);
  const seeded = await seedFleet(database, mqttPort);
  await writeFile(fleetFile, JSON.stringify(seeded.files));
  const api = startCli(['api'], {
    ...database.env,
    HOST: '127.0.0.1',
    PORT: String(httpPort),
    MQTT_PORT: String(mqttPort),
    LOG_LEVEL: 'info',
    ...env,
  });
  let streams: StreamClients | undefined;
  try {
    await api.line(/MQTT broker listening/, 60_000);
    // The HTTP side listens after the MQTT side.
    if (streamClients > 0) await api.line(/Server listening at/, 60_000);
    if (streamClients > 0)
      streams = await attachStreamClients(`http://127.0.0.1:${httpPort}`, seeded.operatorToken, streamClients);
    const cpuBefore = cpuSecondsOf(api.process.pid);
    const result = await runWorker([
      '--mode',
      'boxes',
      '--url',
      `mqtt://127.0.0.1:${mqttPort}`,
      '--fleet',
      fleetFile,
      '--per-box',
      String(perBox),
    ]);
    // The API process's CPU a stored log (user + system, /proc): what the load of the machine moves least.
    const cpuUsPerLog = ((cpuSecondsOf(api.process.pid) - cpuBefore) * 1e6) / result.messages;
    const stored = await verifiedLogs(database);
    const summary = streams?.summary();
    return { ...result, stored, cpuUsPerLog, ...(summary === undefined ? {} : { streams: summary }) };
  } finally {
    streams?.close();
    await api.stop();
  }
}

/** The boxes in the database (what `admin fleet provision` does), their
 * provisioning files, and an operator's token for the event stream. */
async function seedFleet(
  database: BenchDatabase,
  mqttPort: number,
): Promise<{ files: unknown[]; operatorToken: string }> {
  const store = await openStore(database.config, { onIdleError: () => undefined });
  try {
    const now = Date.now();
    // Sealed on purpose, though new parkings are signed by default:
    // the figures compare with runs from before protocol version 2.
    const parkingId = await new ParkingRepository(store).insert(
      {
        name: 'Ingest bench',
        description: null,
        currency: 'EUR',
        pricePerHourMinor: 250,
        maxDurationMinutes: 120,
        tries: 255,
        isOnline: false,
        keys: { accessMode: 'sealed', parkingKey: randomKeyHex() },
      },
      now,
    );
    const { files } = await provisionFleet(
      store,
      { parkingId, count: boxes, createParkings: true, mqttUrl: `mqtt://127.0.0.1:${mqttPort}` },
      now,
    );
    return { files, operatorToken: (await addOperator(store, 'bench', now)).token };
  } finally {
    await store.close();
  }
}

async function verifiedLogs(database: BenchDatabase): Promise<number> {
  const store = await openStore(database.config, { onIdleError: () => undefined });
  try {
    const row = await store.kysely
      .selectFrom('box_logs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('verified', '=', 1)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await store.close();
  }
}

async function runWorker(args: string[]): Promise<Rate> {
  const child = startTsx(worker, args);
  try {
    const line = await child.line(/^result /);
    return JSON.parse(line.slice('result '.length)) as Rate;
  } finally {
    await child.stop();
  }
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

/** User + system CPU seconds of a process so far (/proc/PID/stat, clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
