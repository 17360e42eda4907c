// npm run bench:ingest [-- --boxes 200 --per-box 250 --bare-count 50000]
//
// Box responses -> stored box logs per second, through `parkbench api` (its
// own process: the embedded aedes broker and the ingestion, which commits
// each box log before the publisher's PUBACK). The publishers are many
// simulated boxes' accounts in a second process, each publishing verified
// responses made beforehand by a SimulatedBox, at QoS 1, as fast as the
// broker acknowledges them. Baseline, in the same run: a bare aedes broker in
// its own process and two plain clients (one publisher, one subscriber, QoS
// 1). Targets (issue 7): at least 10,000 box logs stored per second; goal:
// half the bare broker's rate.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { freePort } from '../lib/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../api/db/open.js';
import { ParkingRepository } from '../api/repositories/parkings.js';
import { randomKeyHex } from '../api/auth/secrets.js';
import { provisionFleet } from '../api/boxes/fleet.js';
import { formatNumber, startTsx } from './support/processes.js';

const boxes = Number(argument('--boxes') ?? 200);
const perBox = Number(argument('--per-box') ?? 250);
const bareCount = Number(argument('--bare-count') ?? 50_000);
const worker = new URL('./support/ingest-worker.ts', import.meta.url);
const directory = await mkdtemp(join(tmpdir(), 'pb-bench-ingest-'));

try {
  console.log(`ingestion benchmark: ${boxes} simulated boxes x ${perBox} verified responses, QoS 1, 2-core machine`);
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
} finally {
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

async function throughApi(): Promise<Rate & { stored: number }> {
  const databasePath = join(directory, 'bench.sqlite');
  const mqttPort = await freePort();
  const fleetFile = join(directory, 'fleet.json');
  await writeFile(fleetFile, JSON.stringify(seedFleet(databasePath, mqttPort)));
  const api = startTsx(new URL('../bin/parkbench.js', import.meta.url), ['api'], {
    DATABASE_PATH: databasePath,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    MQTT_PORT: String(mqttPort),
    LOG_LEVEL: 'info',
  });
  try {
    await api.line(/MQTT broker listening/, 60_000);
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
    const db = openDatabase(databasePath);
    const stored = db.prepare('SELECT count(*) FROM box_logs WHERE verified = 1').pluck().get() as number;
    db.close();
    return { ...result, stored };
  } finally {
    await api.stop();
  }
}

/** The boxes in the database (what `admin fleet provision` does) and their provisioning files. */
function seedFleet(databasePath: string, mqttPort: number): unknown[] {
  const db = openDatabase(databasePath);
  try {
    const now = Date.now();
    // Sealed on purpose, though new parkings are signed by default (issue 13):
    // the figures compare with runs from before protocol version 2.
    const parkingId = new ParkingRepository(db).insert(
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
    return provisionFleet(
      db,
      { parkingId, count: boxes, createParkings: true, mqttUrl: `mqtt://127.0.0.1:${mqttPort}` },
      now,
    ).files;
  } finally {
    db.close();
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
