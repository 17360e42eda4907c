// Builds an API app on its own temporary database, with a manual clock and a
// cheap scrypt cost, plus a client app; cleans everything up after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { appLogger, type AppLoggerOptions } from '../../api/app-logger.js';
import type { ControlDispatcher } from '../../api/control/dispatcher.js';
import { createService } from '../../api/service.js';
import type { MqttConnection, MqttService } from '../../api/mqtt/mqtt-service.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { configWith, parsePostgresUrl, type ApiConfig } from '../../api/config/index.js';
import type { Dialect } from '../../api/db/store.js';
import { databaseForTest, TEST_STORE_VARIABLE } from './stores.js';
import type { AppContext } from '../../api/context.js';
import type { Db } from '../../api/db/open.js';
import { hashIssuedSecret } from '../../api/auth/secrets.js';
import { ClientAppRepository } from '../../api/auth/client-apps-repository.js';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** The MQTT side, when the test asked for one (`mqtt`). */
  mqtt: MqttService | undefined;
  /** The control dispatcher, beside MQTT. */
  control: ControlDispatcher | undefined;
  clock: FakeClock;
  config: ApiConfig;
  client: { client_app_id: string; client_secret: string };
  dir: string;
  /** The app's database for a process started beside it (`parkbench admin`,
   * a fixture): DATABASE_PATH on SQLite, DATABASE_URL on PostgreSQL. */
  databaseEnv: Record<string, string>;
}

export const TEST_SCRYPT_LOG2_N = 10;

/**
 * The store test apps run on: PostgreSQL when PARKBENCH_TEST_STORE is
 * `postgres`, else SQLite (`sqlite`, `both` or unset: a suite run once per
 * store sets it; storeTests' repository tests cover both in every run). A
 * test that gives its own databasePath is about the SQLite file and keeps it.
 */
export function appStore(): Dialect {
  return process.env[TEST_STORE_VARIABLE] === 'postgres' ? 'postgres' : 'sqlite';
}

export function tempDir(t: ExecutionContext, prefix = 'parkbench-api-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function testApp(
  t: ExecutionContext,
  overrides: Partial<ApiConfig> = {},
  options: {
    startForwarding?: boolean;
    startControl?: boolean;
    dir?: string;
    mqtt?: MqttConnection;
    clock?: FakeClock;
    /** `sqlite` for a test of what only SQLite has (its busy timeout, its
     * file), whatever PARKBENCH_TEST_STORE says; its title says so. */
    store?: Dialect;
    /** The app's logger (pino options, a stream to read the log lines); none by default. */
    logger?: AppLoggerOptions;
  } = {},
): Promise<TestApp> {
  const dir = options.dir ?? tempDir(t);
  const postgresUrl =
    (options.store ?? appStore()) === 'postgres' && overrides.databasePath === undefined
      ? await postgresDatabaseOf(t, dir)
      : undefined;
  const config = configWith({
    databasePath: join(dir, 'db', 'test.sqlite'),
    // A small pool: a test file runs dozens of apps at once on one server.
    ...(postgresUrl === undefined ? {} : { databaseUrl: parsePostgresUrl(postgresUrl), databasePoolSize: 3 }),
    scryptLog2N: TEST_SCRYPT_LOG2_N,
    ...overrides,
  });
  const clock = options.clock ?? new FakeClock();
  // The forwarding worker is driven by each test (runOnce), unless asked.
  // So is the control-command dispatcher (test/api/control/ starts it).
  const service = await createService(config, {
    clock,
    startForwarding: options.startForwarding ?? false,
    startControl: options.startControl ?? false,
    ...(options.mqtt === undefined ? {} : { mqtt: options.mqtt }),
    logger: appLogger(options.logger),
  });
  const { app, ctx, mqtt, control } = service;
  t.teardown(() => service.close());
  await app.ready();
  const client = { client_app_id: 'test-client', client_secret: 'test-secret-0123456789' };
  const clients = new ClientAppRepository(ctx.store);
  if (!(await clients.findByClientAppId(client.client_app_id)))
    await clients.insert('test', client.client_app_id, hashIssuedSecret(client.client_secret), clock.now());
  const databaseEnv: Record<string, string> =
    postgresUrl === undefined ? { DATABASE_PATH: config.databasePath } : { DATABASE_URL: postgresUrl };
  return { app, ctx, mqtt, control, clock, config, client, dir, databaseEnv };
}

/** The SQLite connection under a test app: for tests of what exists on
 * SQLite only (its busy timeout, its file's locks), which say so. */
export function sqliteConnection(test: TestApp): Db {
  const { store } = test.ctx;
  if (store.dialect !== 'sqlite') throw new Error('this test is about SQLite and runs on SQLite only');
  return store.sqlite;
}

/** The app's database as `--database` takes it: the SQLite file or the postgres:// URL. */
export function databaseArgument(test: TestApp): string {
  return test.databaseEnv.DATABASE_URL ?? test.config.databasePath;
}

/** The PostgreSQL database of each folder: two test apps given one `dir`
 * share one database, as two processes share one SQLite file. */
const postgresDatabases = new Map<string, Promise<string>>();

function postgresDatabaseOf(t: ExecutionContext, dir: string): Promise<string> {
  let url = postgresDatabases.get(dir);
  if (url === undefined) {
    postgresDatabases.set(dir, (url = databaseForTest(t)));
    t.teardown(() => {
      postgresDatabases.delete(dir);
    });
  }
  return url;
}

export const DRIVER = {
  email: 'ada@example.com',
  password: 'correct horse',
  password_confirmation: 'correct horse',
  first_name: 'Ada',
  last_name: 'Lovelace',
  phone: '+44 20 7946 0000',
};

export function register(test: TestApp, fields: Record<string, unknown> = DRIVER): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'POST',
    url: '/api/car_driver',
    payload: { api_car_driver_fo_user: fields, ...test.client },
  });
}

export function passwordGrant(
  test: TestApp,
  username = DRIVER.email,
  password = DRIVER.password,
  remoteAddress?: string,
): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'password', username, password, ...test.client },
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
}

/** Registers the standard driver and logs in. */
export async function loggedIn(test: TestApp): Promise<Tokens> {
  const registered = await register(test);
  if (registered.statusCode !== 201) throw new Error(`registration failed: ${registered.body}`);
  const token = await passwordGrant(test);
  if (token.statusCode !== 200) throw new Error(`login failed: ${token.body}`);
  return token.json<Tokens>();
}

export function me(test: TestApp, authorization?: string): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'GET',
    url: '/api/car_driver/me',
    headers: authorization === undefined ? {} : { authorization },
  });
}

/** Asserts the one error body shape and returns it. */
export function errorBody(
  t: ExecutionContext,
  response: LightMyRequestResponse,
): { error: string; message: string; details: { path: string; message: string }[] } {
  const body = response.json<{ error: string; message: string; details: { path: string; message: string }[] }>();
  t.is(typeof body.error, 'string');
  t.is(typeof body.message, 'string');
  t.true(Array.isArray(body.details));
  return body;
}
