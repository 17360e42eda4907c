// Several API processes, with real processes: two `parkbench api`
// on one database and one mosquitto, the box responses taken as a shared
// subscription; a stream of verified responses from a box over MQTT, and of
// box-log POSTs over HTTP spread over both processes; the entrance and the
// exit of each parking session sent to both processes at once; one process
// killed with SIGKILL in the middle and started again with its MQTT client
// id. Every acknowledged log is stored once, every session ends in the right
// state, and every forwarded log reaches a real receiver. Then a process
// stopped on purpose leaves no session for the broker to route a share to.
//
// Setup goes through the CLI and checks through the operator API, so the test
// holds whatever the store behind the processes.
import { join } from 'node:path';
import avaTest, { type ExecutionContext } from 'ava';
import mqtt from 'mqtt';
import { FakeClock } from '../../lib/fake-clock.js';
import { freePort } from '../../lib/free-port.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseProvisioning, type Provisioning } from '../../lib/provisioning-file.js';
import { verifiedResponsesOf, type MadeResponse } from '../../simulator/verified-responses.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { postgresForFile } from '../helpers/postgres.js';
import { startReceiver } from '../helpers/receiver.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';

// One test at a time: each runs two API processes, mosquitto and a receiver.
const test = testNeeding('mosquitto', avaTest.serial);
const postgresTest = testNeeding(['mosquitto', 'postgres'], avaTest.serial);
const database = postgresForFile(avaTest);
const topics = new Topics();

const ENTRANCE = 9301;
const EXIT = 9302;
/** Verified responses the entrance box publishes on mosquitto. */
const MQTT_COUNT = 400;
/** Verified responses of the exit box that drivers' apps POST, in batches of BATCH. */
const HTTP_COUNT = 400;
const BATCH = 50;
/** Publishes in flight at once, so that some are unacknowledged at the kill. */
const WINDOW = 20;
/** Drivers, each with a parking session whose entrance and exit arrive at once. */
const DRIVERS = 6;
/** The MQTT responses acknowledged by the broker when the second process is killed. */
const KILL_AFTER = 150;
const API_ACCOUNT = { username: 'parkbench-api', password: 'api-password-0123' };

/** `parkbench admin ...` on the test's database; its JSON output. */
async function admin(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await runCli(['admin', ...args, '--json'], { env });
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

interface Seeded {
  parkingId: number;
  client: { client_app_id: string; client_secret: string };
  operatorToken: string;
  boxes: Map<number, Provisioning>;
  aclDir: string;
}

async function seed(env: NodeJS.ProcessEnv, dir: string, receiverUrl: string): Promise<Seeded> {
  const parking = await admin(env, [
    'parking',
    'create',
    '--name',
    'Two processes',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.00',
    '--max-duration-minutes',
    '120',
    '--access',
    'sealed',
  ]);
  const parkingId = parking.id as number;
  const added = [];
  for (const [moduleId, direction, mac] of [
    [ENTRANCE, 'entrance', '02:50:42:00:93:01'],
    [EXIT, 'exit', '02:50:42:00:93:02'],
  ] as const)
    added.push(
      await admin(env, [
        'box',
        'add',
        '--parking',
        String(parkingId),
        '--module-id',
        String(moduleId),
        '--mac',
        mac,
        '--direction',
        direction,
      ]),
    );
  const [client, operator] = await Promise.all([
    admin(env, ['client-app', 'create', '--name', 'two-processes']),
    admin(env, ['operator', 'add', '--name', 'two-processes']),
    admin(env, ['parking', 'forwarding', '--parking', String(parkingId), '--url', receiverUrl, '--expose', 'true']),
  ]);
  const aclDir = join(dir, 'mosquitto');
  const exported = await runCli(['admin', 'mqtt-acl', '--format', 'mosquitto', '--out', aclDir], {
    env: { ...env, MQTT_USERNAME: API_ACCOUNT.username, MQTT_PASSWORD: API_ACCOUNT.password },
  });
  if (exported.code !== 0) throw new Error(exported.stderr);
  const boxes = new Map<number, Provisioning>();
  for (const box of added)
    boxes.set(
      box.module_id as number,
      parseProvisioning({
        module_id: box.module_id,
        parking_id: parkingId,
        direction: box.direction,
        mac_address: box.mac_address,
        parking_key: parking.parking_key,
        box_key: box.box_key,
        mqtt: { url: 'mqtt://127.0.0.1:1883', username: box.mqtt_username, password: box.mqtt_password },
      }),
    );
  return {
    parkingId,
    client: client as Seeded['client'],
    operatorToken: operator.token as string,
    boxes,
    aclDir,
  };
}

/** An API process's address and how to (re)start it. */
interface ApiProcess {
  readonly base: string;
  process: CliProcess;
  start(): Promise<void>;
}

function apiProcess(t: ExecutionContext, env: NodeJS.ProcessEnv, port: number): ApiProcess {
  const api: ApiProcess = {
    base: `http://127.0.0.1:${port}`,
    process: undefined as unknown as CliProcess,
    start: async () => {
      api.process = startCli(t, ['api'], { ...env, PORT: String(port) });
      // After its SUBACK the broker routes responses to this process (lib/resilient-mqtt.ts).
      await api.process.waitForLine(/"msg":"subscribed"/, 30_000);
    },
  };
  return api;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A request that an app repeats until one of the processes answers it: a
 * connection refused or cut (the process just died) goes to the next one.
 * The answer's status and body.
 */
async function request(
  apis: readonly ApiProcess[],
  first: number,
  path: string,
  init: { method?: string; token?: string; body?: unknown },
): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 0; ; attempt++) {
    const api = apis[(first + attempt) % apis.length] as ApiProcess;
    try {
      const response = await fetch(`${api.base}${path}`, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers: {
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      return { status: response.status, body: await response.json() };
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

interface Driver {
  userId: number;
  token: string;
}

async function driver(apis: readonly ApiProcess[], index: number, seeded: Seeded): Promise<Driver> {
  const email = `driver-${index}@parkbench.test`;
  const password = 'correct horse battery';
  const registered = await request(apis, index, '/api/car_driver', {
    body: {
      api_car_driver_fo_user: {
        email,
        password,
        password_confirmation: password,
        first_name: 'Driver',
        last_name: String(index),
        phone: '+33 1 23 45 67 89',
      },
      ...seeded.client,
    },
  });
  if (registered.status !== 201) throw new Error(`registration: ${JSON.stringify(registered.body)}`);
  const login = await request(apis, index + 1, '/api/oauth/token', {
    body: { grant_type: 'password', username: email, password, ...seeded.client },
  });
  if (login.status !== 200) throw new Error(`login: ${JSON.stringify(login.body)}`);
  return {
    userId: (registered.body as { id: number }).id,
    token: (login.body as { access_token: string }).access_token,
  };
}

/** `YYYY-MM-DD HH:MM:SS`, UTC: a box log's created_at. */
function createdAt(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

interface BoxLogEntry {
  box_log: Record<string, unknown>;
}

function entry(
  provisioning: Provisioning,
  driverId: number,
  smartKeyId: number | null,
  message: { command: string; response: string },
  at: number,
): BoxLogEntry {
  return {
    box_log: {
      fo_user_id: driverId,
      smart_key_id: smartKeyId,
      equipment_id: provisioning.moduleId,
      secured_parking_id: provisioning.parkingId,
      type: provisioning.direction === 'entrance' ? 'in' : 'out',
      command: message.command,
      response: message.response,
      offline: false,
      created_at: createdAt(at),
    },
  };
}

/** POST /api/box_logs until one process answers 201 (a verified log sent twice is stored once). */
async function postLogs(
  apis: readonly ApiProcess[],
  first: number,
  token: string,
  entries: readonly BoxLogEntry[],
): Promise<void> {
  for (;;) {
    const answer = await request(apis, first, '/api/box_logs', { token, body: { box_logs: entries } });
    if (answer.status === 201) return;
    // 503 database_busy asks for a retry; anything else is a failure of the test.
    if (answer.status !== 503) throw new Error(`POST /api/box_logs: ${answer.status} ${JSON.stringify(answer.body)}`);
    await sleep(50);
  }
}

interface OperatorLog {
  id: number;
  equipment_id: number;
  box_seq: number | null;
  verified: boolean;
  response: string | null;
}

/** Every box log of a box, through the operator API's pages. */
async function storedLogs(apis: readonly ApiProcess[], token: string, moduleId: number): Promise<OperatorLog[]> {
  const logs: OperatorLog[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `box=${moduleId}&limit=500${cursor === null ? '' : `&cursor=${cursor}`}`;
    const page = await request(apis, 0, `/api/operator/box_logs?${query}`, { token });
    const body = page.body as { box_logs: OperatorLog[]; next_cursor: string | null };
    logs.push(...body.box_logs);
    cursor = body.next_cursor;
  } while (cursor !== null);
  return logs;
}

async function until(what: () => string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await sleep(200);
  }
}

/** The response message a box publishes for an answer. */
function responseMessage(command: Buffer, response: Buffer, at: number): string {
  return JSON.stringify({
    command: command.toString('base64'),
    response: response.toString('base64'),
    received_at: new Date(at).toISOString(),
    via: 'mqtt',
    context: {},
  });
}

const TITLE =
  'two API processes on one database and one mosquitto, one killed with SIGKILL mid-stream and restarted: every acknowledged log stored once, every session ended, every forwarded log delivered';

// The issue's case is PostgreSQL; SQLite (two processes on one file) holds the same.
test(`${TITLE} [sqlite]`, async (t) => {
  const dir = tempDir(t, 'parkbench-two-');
  await twoProcesses(t, dir, { DATABASE_PATH: join(dir, 'parkbench.sqlite') });
});

postgresTest(`${TITLE} [postgres]`, async (t) => {
  await twoProcesses(t, tempDir(t, 'parkbench-two-'), { DATABASE_URL: database().url });
});

async function twoProcesses(t: ExecutionContext, dir: string, database: NodeJS.ProcessEnv): Promise<void> {
  t.timeout(240_000);
  const receiver = await startReceiver(t);
  const seeded = await seed(database, dir, receiver.url);
  const entrance = seeded.boxes.get(ENTRANCE) as Provisioning;
  const exit = seeded.boxes.get(EXIT) as Provisioning;
  const broker = await startMosquitto(t, seeded.aclDir, API_ACCOUNT);
  const env: NodeJS.ProcessEnv = {
    ...database,
    HOST: '127.0.0.1',
    MQTT_URL: broker.url,
    MQTT_USERNAME: API_ACCOUNT.username,
    MQTT_PASSWORD: API_ACCOUNT.password,
    // The receiver is on loopback; one attempt's limit is short, so a delivery
    // the killed process held is taken over within seconds (its lease).
    FORWARDING_ALLOW_PRIVATE: 'true',
    FORWARDING_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'info',
  };
  const apis = [apiProcess(t, env, await freePort()), apiProcess(t, env, await freePort())];
  await Promise.all(apis.map((api) => api.start()));
  const second = apis[1] as ApiProcess;

  // Drivers with a session each; the boxes answer their keys' commands.
  const now = Date.now();
  const clock = new FakeClock(now);
  const entranceBox = await SimulatedBox.start({ clock, provisioning: entrance });
  const exitBox = await SimulatedBox.start({ clock, provisioning: exit });
  t.teardown(async () => {
    await entranceBox.stop();
    await exitBox.stop();
  });
  const drivers = await Promise.all(Array.from({ length: DRIVERS }, (_, index) => driver(apis, index, seeded)));
  const sessions: {
    driver: Driver;
    id: number;
    keyId: number;
    command: Buffer;
    inAnswer: Buffer;
    outAnswer: Buffer;
  }[] = [];
  for (const [index, each] of drivers.entries()) {
    const opened = await request(apis, index, '/api/car_driver/parking_sessions', {
      token: each.token,
      body: { parking_session: { secured_parking_id: seeded.parkingId } },
    });
    if (opened.status !== 201) throw new Error(`session: ${JSON.stringify(opened.body)}`);
    const body = opened.body as {
      parking_session: { id: number };
      smart_key: { id: number; access_command: string };
    };
    const command = Buffer.from(body.smart_key.access_command, 'base64');
    const inAnswer = await entranceBox.handleCommand(command);
    const outAnswer = await exitBox.handleCommand(command);
    if (inAnswer === null || outAnswer === null) throw new Error('a simulated box dropped a session command');
    sessions.push({
      driver: each,
      id: body.parking_session.id,
      keyId: body.smart_key.id,
      command,
      inAnswer,
      outAnswer,
    });
  }

  // The streams: the entrance box's responses over MQTT, the exit box's over
  // HTTP; the same boxes, so their box_seqs follow the sessions' answers.
  const mqttResponses = await verifiedResponsesOf(entranceBox, entrance, MQTT_COUNT, now);
  const httpResponses = await verifiedResponsesOf(exitBox, exit, HTTP_COUNT, now);
  const boxClient = await mqtt.connectAsync(broker.url, {
    clientId: `two-processes-${ENTRANCE}`,
    clean: false,
    username: entrance.mqtt?.username ?? '',
    password: entrance.mqtt?.password ?? '',
    reconnectPeriod: 100,
  });
  t.teardown(() => boxClient.endAsync(true));
  const topic = topics.box(ENTRANCE, 'response');
  let acknowledged = 0;
  let killed: Promise<void> | undefined;
  const publishStream = async (): Promise<void> => {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < mqttResponses.length) {
        const made = mqttResponses[next++] as MadeResponse;
        await boxClient.publishAsync(topic, made.payload, { qos: 1 });
        acknowledged++;
        if (acknowledged === KILL_AFTER)
          killed = (async () => {
            second.process.child.kill('SIGKILL');
            t.is(await second.process.exited, 'SIGKILL');
            await second.start(); // the same port, so the same MQTT client id: its session is waiting
          })();
      }
    };
    await Promise.all(Array.from({ length: WINDOW }, lane));
  };
  const postStream = async (): Promise<void> => {
    const poster = drivers[0] as Driver;
    const batches: BoxLogEntry[][] = [];
    for (let at = 0; at < httpResponses.length; at += BATCH)
      batches.push(
        httpResponses.slice(at, at + BATCH).map((made) => {
          const message = JSON.parse(made.payload) as { command: string; response: string };
          return entry(exit, poster.userId, null, message, now);
        }),
      );
    // Two batches at a time, one to each process.
    for (let index = 0; index < batches.length; index += 2)
      await Promise.all(
        batches.slice(index, index + 2).map((batch, lane) => postLogs(apis, lane, poster.token, batch)),
      );
  };
  const sessionExchanges = async (): Promise<void> => {
    await Promise.all(
      sessions.map(async (session, index) => {
        const inMessage = {
          command: session.command.toString('base64'),
          response: session.inAnswer.toString('base64'),
        };
        const outEntry = entry(
          exit,
          session.driver.userId,
          session.keyId,
          { command: session.command.toString('base64'), response: session.outAnswer.toString('base64') },
          now + 1_000,
        );
        // The entrance and the exit at the same moment, through different processes
        // (even sessions: both over HTTP; odd ones: the entrance over MQTT).
        await Promise.all([
          index % 2 === 0
            ? postLogs(apis, 0, session.driver.token, [
                entry(entrance, session.driver.userId, session.keyId, inMessage, now),
              ])
            : boxClient.publishAsync(topic, responseMessage(session.command, session.inAnswer, now), { qos: 1 }),
          postLogs(apis, 1, session.driver.token, [outEntry]),
        ]);
      }),
    );
  };
  await Promise.all([publishStream(), postStream(), sessionExchanges()]);
  t.not(killed, undefined, 'the second process was killed mid-stream');
  await killed;

  // Stored: each response once, none lost (the killed process's share came back with its session).
  const token = seeded.operatorToken;
  const expectedEntrance = MQTT_COUNT + DRIVERS;
  const expectedExit = HTTP_COUNT + DRIVERS;
  let entranceLogs: OperatorLog[] = [];
  let exitLogs: OperatorLog[] = [];
  await until(
    () =>
      `every response stored: entrance ${entranceLogs.length} of ${expectedEntrance}, exit ${exitLogs.length} of ${expectedExit}`,
    async () => {
      [entranceLogs, exitLogs] = await Promise.all([storedLogs(apis, token, ENTRANCE), storedLogs(apis, token, EXIT)]);
      return entranceLogs.length >= expectedEntrance && exitLogs.length >= expectedExit;
    },
  );
  t.is(entranceLogs.length, expectedEntrance, 'entrance: one log per response');
  t.is(exitLogs.length, expectedExit, 'exit: one log per response');
  const seqs = (logs: readonly OperatorLog[]) => new Set(logs.map((log) => log.box_seq));
  t.is(seqs(entranceLogs).size, expectedEntrance, 'entrance: no box_seq twice');
  t.is(seqs(exitLogs).size, expectedExit, 'exit: no box_seq twice');
  t.true(
    [...entranceLogs, ...exitLogs].every((log) => log.verified),
    'every log verified',
  );

  // Sessions: each ended by its exit whichever process committed first, its tries as the boxes said.
  const listed = await request(apis, 1, `/api/operator/sessions?parking_id=${seeded.parkingId}&limit=100`, { token });
  const states = listed.body as Record<string, unknown>[];
  t.is(states.length, DRIVERS);
  for (const session of states)
    t.like(
      session,
      { state: 'exiting', entrance_remaining_tries: 9, exit_remaining_tries: 9 },
      `session ${String(session.id)}`,
    );

  // Forwarded: every verified log reaches the receiver; a delivery sent again
  // (its process died before recording it) carries the same webhook-id, which
  // is how a receiver recognizes it.
  const expectedForwarded = expectedEntrance + expectedExit;
  const deliveriesOf = new Map<string, Set<string>>();
  await until(
    () => `every log forwarded: ${deliveriesOf.size} of ${expectedForwarded}`,
    () => {
      deliveriesOf.clear();
      for (const received of receiver.received) {
        const id = String(received.headers['webhook-id']);
        for (const record of JSON.parse(received.body) as { response: string }[]) {
          const ids = deliveriesOf.get(record.response) ?? new Set<string>();
          ids.add(id);
          deliveriesOf.set(record.response, ids);
        }
      }
      return deliveriesOf.size >= expectedForwarded;
    },
  );
  t.is(deliveriesOf.size, expectedForwarded, 'each stored log forwarded');
  t.true(
    [...deliveriesOf.values()].every((ids) => ids.size === 1),
    'a log sent twice was sent in the same delivery (one webhook-id)',
  );
  const records = receiver.received.reduce((sum, received) => sum + (JSON.parse(received.body) as unknown[]).length, 0);
  t.log(
    `${acknowledged} MQTT responses acknowledged by mosquitto; ${receiver.received.length} deliveries, ${records} records for ${expectedForwarded} logs`,
  );

  // A process stopped on purpose (SIGTERM) ends its session: the broker
  // routes it nothing more, so the responses published now all reach the
  // other process at once instead of half of them waiting for its return.
  t.is(await second.process.stop('SIGTERM'), 0);
  const after = await verifiedResponsesOf(entranceBox, entrance, 40, now);
  for (const made of after) await boxClient.publishAsync(topic, made.payload, { qos: 1 });
  await until(
    () => `the responses after the stop stored by the first process: ${entranceLogs.length - expectedEntrance} of 40`,
    async () => {
      entranceLogs = await storedLogs(apis, token, ENTRANCE);
      return entranceLogs.length >= expectedEntrance + after.length;
    },
    20_000,
  );
  t.is(entranceLogs.length, expectedEntrance + after.length);
  t.is(await (apis[0] as ApiProcess).process.stop('SIGTERM'), 0);
}
