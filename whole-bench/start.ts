// The whole bench in one process: the API with its embedded broker (or as a
// client of an external one: MQTT_URL) and its database (the SQLite file
// under the data folder unless the configuration names another), the demo
// data (made on the first run, the same afterwards), and the demo parking's
// simulated boxes on MQTT: its own entrance and exit boxes and those added
// with `admin box add --simulated`, never a box added as real (its gateway
// or its own link answers for it). What `npm start` runs, and what
// `parkbench/testing` starts in a test's own process.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { appLogger, type AppLoggerOptions } from '../api/app-logger.js';
import { createService, openApiStore, type Service } from '../api/service.js';
import { databaseShown, type ApiConfig } from '../api/config/index.js';
import type { Store } from '../api/db/store.js';
import { provisionBox } from '../api/boxes/provisioning.js';
import { ensureDemo, type DemoData } from '../api/demo/ensure.js';
import { DomainError } from '../api/http/domain-error.js';
import { BrokerPortError } from '../api/mqtt/broker.js';
import { ensureOperatorClient } from '../api/mqtt/clients.js';
import type { MqttConnection } from '../api/mqtt/mqtt-service.js';
import { ensureOperator } from '../api/operators/accounts.js';
import { ParkingRepository, type AccessMode } from '../api/parkings/index.js';
import { scaledClock, systemClock } from '../lib/clock.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { Topics } from '../lib/mqtt-topics.js';
import { parseProvisioning, type ProvisioningFile } from '../lib/provisioning-file.js';
import { checkLogins, externalAccounts, KEPT_PASSWORDS_FILE, type Login } from './external-broker.js';
import { Simulation } from '../simulator/simulation.js';
import { DatabaseRefusedError } from '../api/db/refused.js';
import { messageOf } from '../lib/message-of.js';
import { BenchStartError, type BenchSetting } from './errors.js';

/** The MQTT account `parkbench app` uses to reach the boxes, as a phone's stand-in. */
export const DEMO_OPERATOR = { name: 'demo-app', username: 'op-demo-app' } as const;

/** The operator account (operator HTTP API) the bench page logs in with; a fresh token each start. */
export const BENCH_OPERATOR = 'bench';

export interface WholeBenchOptions {
  readonly config: ApiConfig;
  /** The embedded broker on the configuration's host and MQTT port, or a client of an external one. */
  readonly mqtt: MqttConnection;
  readonly dataDir: string;
  readonly fresh: boolean;
  readonly speed: number;
  /** The demo parking's access mode when the bench makes it; when given, a
   * demo parking made with the other one is refused. Undefined: signed for
   * a new demo parking, an existing one as it is. */
  readonly accessMode?: AccessMode;
  readonly apiLogger: AppLoggerOptions;
  readonly simLogger: Logger;
  readonly version: string;
  /** How whoever starts the bench sets its HTTP port and its broker's, said
   * when one is taken: `HTTP port 3000 on 127.0.0.1 is already in use (set
   * PORT or --port)`. */
  readonly portHints: { readonly http: string; readonly mqtt: string };
  /** With an external broker (config.mqttUrl): where to write mosquitto's password and ACL files. */
  readonly mqttAclOut?: string;
}

/** The `parkbench ready` line of `parkbench start`, and the fields of `parkbench/testing`'s bench. */
export interface ReadyInfo {
  api_url: string;
  docs_url: string;
  /** The bench page with an operator login in its fragment (`/bench#token=...`): never sent to the server. */
  dashboard_url: string;
  mqtt_url: string;
  /** The database in use: the SQLite file's absolute path, or the PostgreSQL URL with its password masked. */
  database: string;
  client_app_id: string;
  client_secret: string;
  driver: { email: string; password: string };
  parking_id: number;
  /** Every box of the demo parking; those with `simulated` run in this process. */
  boxes: DemoData['boxes'];
  mqtt_operator: { username: string; password: string };
  token_curl: string;
}

export interface WholeBench {
  readonly info: ReadyInfo;
  /** The API: its store, its event hub, its MQTT side. */
  readonly service: Service;
  /** The demo parking's simulated boxes, running in this process. */
  readonly simulation: Simulation;
  /** Stops the boxes, then the API with its broker and its database. */
  stop(): Promise<void>;
}

/** Starts the whole bench; on a failure, stops what had started and rejects
 * with a BenchStartError (or the DomainError of the demo data). */
export async function startWholeBench(options: WholeBenchOptions): Promise<WholeBench> {
  const { config } = options;
  if (options.fresh) await removeBenchData(options.dataDir, config.databasePath);
  const logger = appLogger(options.apiLogger);
  // The store is the bench's until the service takes it.
  let store: Store | undefined;
  let service: Service | undefined;
  let simulation: Simulation | undefined;
  const stop = async (): Promise<void> => {
    await simulation?.stop();
    await (service === undefined ? store?.close() : service.close());
  };
  try {
    // The store first, with the demo data and, for an external broker, the
    // accounts it must know; then the service, which connects to MQTT.
    try {
      store = await openApiStore(config, logger ?? silentLogger);
    } catch (error) {
      throw startError(error, 'database');
    }
    const now = Date.now();
    const demo = await ensureDemo(store, config.scryptLog2N, now, options.accessMode);
    if (options.accessMode !== undefined) await checkAccessMode(store, demo.parking_id, options.accessMode);
    const simulated = demo.boxes.filter((box) => box.simulated).map((box) => box.module_id);
    const topics = new Topics(config.mqttTopicPrefix);
    const external =
      config.mqttUrl === undefined
        ? undefined
        : await externalBrokerAccounts(store, options, simulated, config.mqttUrl, topics, now);
    // The service's from here: it closes the store, also when it fails to start.
    const handed = store;
    store = undefined;
    service = await createService(config, {
      store: handed,
      version: options.version,
      mqtt: options.mqtt,
      ...(logger === undefined ? {} : { logger }),
    });
    const { app } = service;
    const { provisioning, operator, mqttUrl } = external ?? (await embeddedBrokerAccounts(service, simulated, now));
    // The bench page's login, fresh each start (the previous start's is refused from now on).
    const pageLogin = await ensureOperator(handed, BENCH_OPERATOR, now);
    try {
      await app.listen({ host: config.host, port: config.port });
    } catch (error) {
      throw portError(error, `HTTP port ${config.port} on ${config.host}`, options.portHints.http);
    }
    simulation = await Simulation.start({
      members: provisioning.map((file) => ({ provisioning: parseProvisioning(file), settings: {} })),
      clock: options.speed === 1 ? systemClock : scaledClock(options.speed),
      mqtt: { topics },
      stateDir: join(options.dataDir, 'sim'),
      carPassDelayMs: 3_000,
      logger: options.simLogger,
    });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const apiUrl = `http://${host}:${port}`;
    const tokenBody = JSON.stringify({
      grant_type: 'password',
      username: demo.driver.email,
      password: demo.driver.password,
      client_app_id: demo.client_app_id,
      client_secret: demo.client_secret,
    });
    return {
      info: {
        api_url: apiUrl,
        docs_url: `${apiUrl}/docs`,
        dashboard_url: `${apiUrl}/bench#token=${pageLogin.token}`,
        mqtt_url: mqttUrl,
        database: databaseShown(config),
        client_app_id: demo.client_app_id,
        client_secret: demo.client_secret,
        driver: demo.driver,
        parking_id: demo.parking_id,
        boxes: demo.boxes,
        mqtt_operator: operator,
        token_curl: `curl -s -X POST ${apiUrl}/api/oauth/token -H 'Content-Type: application/json' -d '${tokenBody}'`,
      },
      service,
      simulation,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    if (error instanceof BenchStartError || error instanceof DomainError) throw error;
    if (error instanceof BrokerPortError) throw brokerPortError(error, config, options.portHints.mqtt);
    throw startError(error, undefined);
  }
}

/** `cannot start the bench: …`; a database parkbench must not use is the
 * operator's to fix, like a bad setting. */
function startError(error: unknown, setting: BenchSetting | undefined): BenchStartError {
  return new BenchStartError(
    `cannot start the bench: ${messageOf(error)}`,
    setting,
    error instanceof DatabaseRefusedError,
    { cause: error },
  );
}

/** A demo parking made with another access mode than the one asked for. */
async function checkAccessMode(store: Store, parkingId: number, asked: AccessMode): Promise<void> {
  const parking = await new ParkingRepository(store).findById(parkingId);
  if (parking === undefined || parking.access_mode === asked) return;
  throw new BenchStartError(
    `the demo parking of this database is ${parking.access_mode}, not ${asked}: start on another database for a ${asked} one`,
    'accessMode',
    true,
  );
}

interface BenchAccounts {
  provisioning: ProvisioningFile[];
  operator: Login;
  mqttUrl: string;
}

/** The embedded broker, started by the service; every start issues the
 * simulated boxes and the app stand-in fresh MQTT passwords (only hashes are
 * kept) and hands them to the simulated boxes in this process. */
async function embeddedBrokerAccounts(
  service: Service,
  simulated: readonly number[],
  now: number,
): Promise<BenchAccounts> {
  const { store } = service.ctx;
  // The embedded broker's own URL: the port it got.
  const url = service.mqtt?.url ?? '';
  const operator = await ensureOperatorClient(store, DEMO_OPERATOR.name, DEMO_OPERATOR.username, now);
  const provisioning = [];
  for (const moduleId of simulated) provisioning.push(await provisionBox(store, moduleId, url));
  return { provisioning, operator, mqttUrl: url };
}

/** An external broker (MQTT_URL): the accounts it must have loaded, kept
 * from one start to the next (external-broker.ts), checked against it
 * before the API and the boxes connect. */
async function externalBrokerAccounts(
  store: Store,
  options: WholeBenchOptions,
  simulated: readonly number[],
  url: string,
  topics: Topics,
  now: number,
): Promise<BenchAccounts> {
  const { config } = options;
  const apiLogin =
    config.mqttUsername === undefined || config.mqttPassword === undefined
      ? undefined
      : { username: config.mqttUsername, password: config.mqttPassword };
  const { provisioning, operator } = await externalAccounts({
    store,
    dataDir: options.dataDir,
    url,
    moduleIds: simulated,
    operatorName: DEMO_OPERATOR.name,
    operatorUsername: DEMO_OPERATOR.username,
    nowMs: now,
    topics,
    apiLogin,
    aclOut: options.mqttAclOut,
  });
  const logins = [
    ...(apiLogin === undefined ? [] : [apiLogin]),
    operator,
    ...provisioning.map((file) => ({ username: file.mqtt.username, password: file.mqtt.password })),
  ];
  await checkLogins(url, logins, options.mqttAclOut);
  return { provisioning, operator, mqttUrl: url };
}

/** `--fresh`: the database (with its WAL files) and the boxes' state go. */
async function removeBenchData(dataDir: string, databasePath: string): Promise<void> {
  const kept = join(dataDir, KEPT_PASSWORDS_FILE);
  for (const path of [databasePath, `${databasePath}-wal`, `${databasePath}-shm`, join(dataDir, 'sim'), kept]) {
    await rm(path, { recursive: true, force: true });
  }
}

/** A port taken or privileged, with how to set another; any other failure as it is. */
/** The embedded broker's port taken, with how to set another; any other failure to listen as the broker says. */
function brokerPortError(error: BrokerPortError, config: ApiConfig, hint: string): BenchStartError {
  if ((error.cause as NodeJS.ErrnoException | undefined)?.code !== 'EADDRINUSE') return startError(error, 'mqttPort');
  return new BenchStartError(
    `cannot start the bench: MQTT port ${config.mqttPort} on ${config.host} is already in use (${hint})`,
    'mqttPort',
    false,
    { cause: error },
  );
}

function portError(error: unknown, what: string, hint: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new BenchStartError(`${what} is already in use (${hint})`, 'port', false, { cause: error });
  if (code === 'EACCES')
    return new BenchStartError(`${what} needs privileges (${hint})`, 'port', false, { cause: error });
  return error;
}
