// A bench for control commands: the real API (embedded broker, dispatcher,
// ingestion) on a fake clock, parkings and boxes in its database, and real
// simulated boxes on MQTT provisioned from that database.
import type { ExecutionContext } from 'ava';
import { randomKeyHex } from '../../api/auth/secrets.js';
import { hashMqttPassword } from '../../api/auth/mqtt-password.js';
import { generateIssuerKeyPair, type BoxDirection } from '../../firmware-protocol/index.js';
import type { Clock } from '../../lib/clock.js';
import type { FakeClock } from '../../lib/fake-clock.js';
import { BoxMqttLink } from '../../simulator/links/mqtt-link.js';
import type { Provisioning } from '../../lib/provisioning-file.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import type { ApiConfig } from '../../api/config/index.js';
import { testApp, type TestApp } from './api-app.js';
import { all } from './sql.js';

export const POLL_MS = 1_000;

export function controlApp(
  t: ExecutionContext,
  options: { dir?: string; config?: Partial<ApiConfig>; clock?: FakeClock } = {},
): Promise<TestApp> {
  return testApp(
    t,
    { controlPollMs: POLL_MS, boxAnswerTimeoutMs: 2_000, ...options.config },
    {
      mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 },
      startControl: true,
      ...(options.dir === undefined ? {} : { dir: options.dir }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    },
  );
}

let nextModuleId = 20_000;

export interface BenchParking {
  id: number;
  moduleIds: number[];
}

/** A parking (sealed, or signed with a fresh issuer pair) and its boxes, entrance first. */
export async function addParking(
  app: Pick<TestApp, 'ctx'> & { clock: Pick<Clock, 'now'> },
  options: { signed?: boolean; boxes?: BoxDirection[]; isOnline?: boolean } = {},
): Promise<BenchParking> {
  const issuer = generateIssuerKeyPair();
  const id = await app.ctx.parkings.insert(
    {
      name: 'Control lot',
      description: null,
      currency: 'EUR',
      pricePerHourMinor: 250,
      maxDurationMinutes: 120,
      tries: 10,
      isOnline: options.isOnline ?? false,
      keys:
        options.signed === true
          ? {
              accessMode: 'signed',
              issuerPrivateKey: issuer.privateKey.toString('hex'),
              issuerPublicKey: issuer.publicKey.toString('hex'),
            }
          : { accessMode: 'sealed', parkingKey: randomKeyHex() },
    },
    app.clock.now(),
  );
  const moduleIds: number[] = [];
  for (const direction of options.boxes ?? ['entrance', 'exit']) {
    const moduleId = (nextModuleId += 1);
    const mac =
      `02:50:43:00:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`.toUpperCase();
    await app.ctx.boxes.insert(
      {
        moduleId,
        parkingId: id,
        direction,
        macAddress: mac,
        boxKey: randomKeyHex(),
        mqttPasswordHash: hashMqttPassword(`pw-${moduleId}`),
      },
      app.clock.now(),
    );
    moduleIds.push(moduleId);
  }
  return { id, moduleIds };
}

/** What `admin box provision` gives the box now (helper A's rule for the
 * issuer keys: issuer_key = next ?? current; previous = next set ? current : previous). */
export async function provisioningOf(app: Pick<TestApp, 'ctx'>, moduleId: number): Promise<Provisioning> {
  const box = await app.ctx.boxes.findByModuleId(moduleId);
  if (box === undefined) throw new Error(`no box ${moduleId}`);
  const parking = await app.ctx.parkings.findById(box.parking_id);
  if (parking === undefined) throw new Error(`no parking ${box.parking_id}`);
  const hex = (value: string | null): Buffer | null => (value === null ? null : Buffer.from(value, 'hex'));
  const next = parking.issuer_next_public_key;
  return {
    moduleId,
    parkingId: box.parking_id,
    direction: box.direction,
    macAddress: box.mac_address,
    parkingKey: hex(parking.parking_key),
    parkingKeyNext: null,
    issuerKey: hex(next ?? parking.issuer_public_key),
    issuerKeyPrevious: hex(next !== null ? parking.issuer_public_key : parking.issuer_previous_public_key),
    boxKey: Buffer.from(box.box_key, 'hex'),
    skewSeconds: box.skew_seconds,
    minBatteryMv: box.min_battery_mv,
    mqtt: null,
  };
}

export interface RunningBox {
  box: SimulatedBox;
  link: BoxMqttLink;
  stop(): Promise<void>;
}

/** A simulated box on the API's broker, on the API's clock, provisioned from the database. */
export async function startBox(
  t: ExecutionContext,
  app: TestApp,
  moduleId: number,
  box?: SimulatedBox,
): Promise<RunningBox> {
  const simulated =
    box ?? (await SimulatedBox.start({ clock: app.clock, provisioning: await provisioningOf(app, moduleId) }));
  const link = new BoxMqttLink(simulated, {
    url: app.mqtt?.url ?? '',
    username: `box-${moduleId}`,
    password: `pw-${moduleId}`,
    clock: app.clock,
    backoff: { initialMs: 100, maxMs: 100, factor: 1, jitter: 0 },
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await link.stop();
  };
  t.teardown(async () => {
    await stop();
    await simulated.stop();
  });
  await link.start();
  return { box: simulated, link, stop };
}

/** Steps the fake clock (the dispatcher's poll, backoff and answer timeouts)
 * until `condition` holds, letting real I/O run between steps. */
export async function pumpUntil(
  app: Pick<TestApp, 'control' | 'clock' | 'ctx'>,
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { stepMs?: number; maxSteps?: number } = {},
): Promise<void> {
  const { clock } = app;
  const stepMs = options.stepMs ?? POLL_MS;
  for (let step = 0; step < (options.maxSteps ?? 200); step++) {
    if (await condition()) return;
    // Real time for the broker, the box and ingestion to do their part
    // before the clock moves on. A delivery in flight is given up to 5 s of
    // real time: a clock that outran its answer (BOX_ANSWER_TIMEOUT_MS is
    // two steps) would send it again under a new sequence, and under a
    // loaded CI (coverage, PostgreSQL) a round trip can take a second.
    // Then up to 100 ms more for what the answer sets off.
    await dispatcherAtRest(app);
    for (let spin = 0; spin < 500 && (app.control?.inFlight ?? 0) > 0; spin++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    for (let spin = 0; spin < 10 && !(await condition()); spin++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    if (await condition()) return;
    clock.advance(stepMs);
  }
  // What the queue says, for the one who reads the failure.
  const commands = await all(
    app.ctx.store,
    'SELECT id, module_id, purpose, state, attempts, control_seq, last_status, last_error, next_attempt_at, in_flight_until FROM control_commands ORDER BY id',
  );
  throw new Error(
    `timed out waiting for ${what} (clock ${clock.now()}, dispatcher ${JSON.stringify(app.control?.counters)}, ${app.control?.inFlight ?? 0} in flight); control commands: ${JSON.stringify(commands)}`,
  );
}

/** Waits (real time, up to 5 s) until the dispatcher has no read or write
 * of its queue under way: what a step of the fake clock set off is done
 * before the next step, on a fast database or a slow one. */
export async function dispatcherAtRest(app: Pick<TestApp, 'control'>): Promise<void> {
  for (let spin = 0; spin < 1_000; spin++) {
    // What the clock's timers started synchronously, and their microtasks, first.
    await new Promise((resolve) => setImmediate(resolve));
    if ((app.control?.working ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The state of every control command of an operation, by module id. */
export async function statesOf(app: TestApp, operation: string): Promise<Record<number, string>> {
  const rows = await all<{ module_id: number; state: string }>(
    app.ctx.store,
    'SELECT module_id, state FROM control_commands WHERE operation = ? ORDER BY module_id',
    operation,
  );
  return Object.fromEntries(rows.map((row) => [row.module_id, row.state]));
}
