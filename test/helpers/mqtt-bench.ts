// The pieces the whole-bench tests share: an API app with MQTT whose fake
// clock reads real time (boxes in other processes check commands against
// their own, real, clock), MQTT accounts made the way `admin mqtt-client add`
// makes them, a box's provisioning file from the database, a driver with a
// parking session over a real HTTP socket, and an operator that watches a
// box's topics.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import mqtt from 'mqtt';
import type { MqttConnection } from '../../api/mqtt/mqtt-service.js';
import { MqttAccountRepository, type ClientRole } from '../../api/mqtt/accounts.js';
import { hashMqttPassword } from '../../api/auth/mqtt-password.js';
import { mqttUrlOf, provisionBox } from '../../api/boxes/provisioning.js';
import type { ProvisioningFile } from '../../lib/provisioning-file.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { DRIVER, testApp, type TestApp } from './api-app.js';
import { seedParking, type SeededParking } from './parking.js';
import { all } from './sql.js';

export const topics = new Topics();

export interface BenchApp extends TestApp {
  parking: SeededParking;
}

/** An app with MQTT and one parking (an entrance and an exit box); its clock set to now. */
export async function benchApp(
  t: ExecutionContext,
  mqttConnection: MqttConnection = { mode: 'embedded', host: '127.0.0.1', port: 0 },
  dir?: string,
): Promise<BenchApp> {
  const app = await testApp(t, {}, { mqtt: mqttConnection, ...(dir === undefined ? {} : { dir }) });
  app.clock.advanceTo(Date.now());
  return { ...app, parking: await seedParking(app) };
}

/** A gateway or operator account, stored hashed as `admin mqtt-client add` stores it. */
export async function addMqttClient(
  app: TestApp,
  role: ClientRole,
  username: string,
  password: string,
): Promise<{ username: string; password: string }> {
  await new MqttAccountRepository(app.ctx.store).addClient(
    { name: username, role, username, password_hash: hashMqttPassword(password) },
    app.clock.now(),
  );
  return { username, password };
}

/** Writes the box's provisioning file as `admin box provision --out` does
 * (a fresh MQTT password, its hash stored); returns the path and the file. */
export async function provisioningFile(
  app: TestApp,
  moduleId: number,
  mqttUrl?: string,
): Promise<{ path: string; file: ProvisioningFile }> {
  const file = await provisionBox(app.ctx.store, moduleId, mqttUrlOf(app.config));
  const written = mqttUrl === undefined ? file : { ...file, mqtt: { ...file.mqtt, url: mqttUrl } };
  const path = join(app.dir, `box-${moduleId}.json`);
  writeFileSync(path, JSON.stringify(written), { mode: 0o600 });
  return { path, file: written };
}

export interface HttpDriver {
  readonly base: string;
  readonly token: string;
  /** The driver's open session now. */
  current(): Promise<{ id: number; state: string }>;
}

/** Listens on an ephemeral port, registers the standard driver and logs in, all over HTTP. */
export async function httpDriver(app: TestApp): Promise<HttpDriver> {
  const base = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const post = async (path: string, body: unknown, token?: string): Promise<Response> =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(body),
    });
  const registered = await post('/api/car_driver', { api_car_driver_fo_user: DRIVER, ...app.client });
  if (registered.status !== 201) throw new Error(`registration: ${registered.status} ${await registered.text()}`);
  const login = await post('/api/oauth/token', {
    grant_type: 'password',
    username: DRIVER.email,
    password: DRIVER.password,
    ...app.client,
  });
  const { access_token: token } = (await login.json()) as { access_token: string };
  return {
    base,
    token,
    current: async () => {
      const response = await fetch(`${base}/api/car_driver/parking_sessions/current`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return ((await response.json()) as { parking_session: { id: number; state: string } }).parking_session;
    },
  };
}

/** POST /api/car_driver/parking_sessions over the socket: the session and its key's access command. */
export async function openSession(
  driver: HttpDriver,
  parkingId: number,
): Promise<{ sessionId: number; smartKeyId: number; accessCommand: string; state: string }> {
  const response = await fetch(`${driver.base}/api/car_driver/parking_sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${driver.token}` },
    body: JSON.stringify({ parking_session: { secured_parking_id: parkingId } }),
  });
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`session: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as {
    parking_session: { id: number; state: string };
    smart_key: { id: number; access_command: string };
  };
  return {
    sessionId: body.parking_session.id,
    smartKeyId: body.smart_key.id,
    accessCommand: body.smart_key.access_command,
    state: body.parking_session.state,
  };
}

export interface Watched {
  topic: string;
  payload: string;
}

/** An operator client subscribed to every box topic, recording what it sees. */
export async function watchingOperator(
  t: ExecutionContext,
  url: string,
  account: { username: string; password: string },
): Promise<{ client: mqtt.MqttClient; seen: Watched[] }> {
  const client = await mqtt.connectAsync(url, { ...account, reconnectPeriod: 0, connectTimeout: 5_000 });
  t.teardown(() => client.endAsync(true));
  const seen: Watched[] = [];
  client.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
  await client.subscribeAsync(`${topics.prefix}/boxes/#`, { qos: 1 });
  return { client, seen };
}

/** The response messages seen on a box's response topic. */
export function responsesOf(seen: readonly Watched[], moduleId: number): Record<string, unknown>[] {
  return seen
    .filter((message) => message.topic === topics.box(moduleId, 'response'))
    .map((message) => JSON.parse(message.payload) as Record<string, unknown>);
}

/** The barrier of a box as its state topic shows it last. */
export function barrierOf(seen: readonly Watched[], moduleId: number): string | undefined {
  const states = seen.filter((message) => message.topic === topics.box(moduleId, 'state'));
  const last = states.at(-1);
  return last === undefined ? undefined : (JSON.parse(last.payload) as { barrier: string }).barrier;
}

export interface StoredLog {
  id: number;
  source: string;
  verified: number;
  smart_key_id: number | null;
  fo_user_id: number | null;
  equipment_id: number;
  box_seq: number | null;
  type: string;
}

export async function boxLogs(app: TestApp): Promise<StoredLog[]> {
  return await all<StoredLog>(
    app.ctx.store,
    'SELECT id, source, verified, smart_key_id, fo_user_id, equipment_id, box_seq, type FROM box_logs ORDER BY id',
  );
}
