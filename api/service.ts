// The API service, built in one place and in order: the store, the services
// over it (context.ts), the MQTT side when asked (the embedded broker or a
// client of an external one) with the control-command dispatcher over it,
// the kept runs (those a dead process left running ended, and the sweep of
// the command-line runs gone quiet started), the conformance runs, the
// forwarding worker, and last the HTTP app (app.ts), which receives those
// parts. The CLI (`parkbench api`, `parkbench start`), the benchmarks and
// the tests create it here, then listen or inject.
//
// Closing the HTTP app (`close()`, or `app.close()`, which the CLI's graceful
// stop calls) stops everything, the last started first: new requests get 503
// at once; the forwarding worker, the conformance runs (each puts its box's
// issuer keys back while the broker is up), the sweep of quiet runs, the
// control dispatcher, MQTT, the event relay (which sends on what they
// published while stopping); then the HTTP server, once the requests in
// flight are answered; and last the store, so that no box log is
// half-written.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../lib/clock.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { Topics } from '../lib/mqtt-topics.js';
import { buildApp } from './app.js';
import type { ApiConfig } from './config/index.js';
import { ConformanceRuns } from './conformance-runs/index.js';
import { Runs } from './runs/index.js';
import { createContext, type AppContext } from './context.js';
import { ControlDispatcher } from './control/index.js';
import { openStore } from './db/open-store.js';
import type { Store } from './db/store.js';
import { type MqttConnection, MqttService } from './mqtt/index.js';
import { CaptureRing, captureMicros, type CaptureSource } from './capture/index.js';
import { packageVersionNear } from '../lib/package-version.js';
import { onPaymentOutcome } from './sessions/index.js';

export interface ServiceOptions {
  /** Injected time (token expiry, login windows, timeouts); the system clock by default. */
  clock?: Clock;
  /** The process's logger (pino, as app-logger.ts builds it): the HTTP app's
   * requests, and the components' own lines (`api:mqtt`, ...); none by default. */
  logger?: FastifyBaseLogger;
  /** Version shown in the OpenAPI document. */
  version?: string;
  /** MQTT: the embedded broker or an external one. Absent: no MQTT side and
   * no control dispatcher; the routes that reach a box answer 503 mqtt_unavailable. */
  mqtt?: MqttConnection;
  /** A store the caller opened with openApiStore (the bench writes the
   * accounts an external broker must know before the service connects to
   * it); the service owns it from here and closes it. Absent: opened here. */
  store?: Store;
  /** Start the forwarding worker (default true); tests drive it with
   * `ctx.forwarding.runOnce()` or start it on a fake clock. */
  startForwarding?: boolean;
  /** Start the control dispatcher's poll (default true); tests on a fake
   * clock that leaps months leave it off (each poll schedules the next one)
   * unless they test it. */
  startControl?: boolean;
}

export interface Service {
  /** The HTTP app, routes registered, not listening. */
  readonly app: FastifyInstance;
  /** The services routes share: config, clock, store, repositories. */
  readonly ctx: AppContext;
  /** The MQTT side (broker or client, ingestion, commands to boxes), when asked for. */
  readonly mqtt: MqttService | undefined;
  /** Delivers queued control commands (REVOKE, SET_ISSUER), beside MQTT. */
  readonly control: ControlDispatcher | undefined;
  /** Stops everything, in the order the header says (the same as `app.close()`). */
  close(): Promise<void>;
}

export async function createService(config: ApiConfig, options: ServiceOptions = {}): Promise<Service> {
  const { logger } = options;
  const log: Logger = logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openApiStore(config, log));
  // What has started, stopped last first (the store closes after them all).
  const started: (() => Promise<void>)[] = [];
  const stopStarted = async (): Promise<void> => {
    for (const stop of started.splice(0).reverse()) await stop();
  };
  try {
    const ctx = createContext(config, clock, store, {
      forwarding: log.child({ component: 'api:forwarding' }),
      events: log.child({ component: 'api:events' }),
    });
    // The provider reports outcomes; the session service decides what they change.
    ctx.paymentProvider.onOutcome((payment, on) => onPaymentOutcome(ctx, on, payment));
    const { eventRelay } = ctx;
    if (eventRelay !== undefined) {
      await eventRelay.start();
      started.push(() => eventRelay.close());
    }
    // Its waits end (and its expiry timer stops) before MQTT and the dispatcher stop.
    ctx.reservations.start();
    started.push(() => ctx.reservations.close());
    const capture = options.mqtt === undefined ? undefined : captureSource(config, clock);
    const mqtt = options.mqtt === undefined ? undefined : await startMqtt(ctx, options.mqtt, log, capture?.ring);
    if (mqtt !== undefined) started.push(() => mqtt.close());
    const control = mqtt === undefined ? undefined : controlDispatcher(ctx, mqtt, log);
    if (control !== undefined) {
      if (options.startControl !== false) control.start();
      // Stopped before MQTT closes, whether its poll was started or not.
      started.push(() => {
        control.stop();
        return Promise.resolve();
      });
    }
    // Kept runs: those a dead process left running are ended, the retention
    // applied; from then on the sweep ends the command-line runs gone quiet.
    const runs = new Runs({ store, clock, config, events: ctx.events, logger: log.child({ component: 'api:runs' }) });
    await runs.recover();
    runs.startQuietSweep();
    started.push(() => runs.close());
    // Started in the operator API; the broker is still up when they stop.
    const conformanceRuns = new ConformanceRuns({
      store,
      clock,
      config,
      runs,
      logger: log.child({ component: 'api:conformance' }),
      // The bench page follows a run through the event stream's `conformance` events.
      onChange: (run) => ctx.events.publishConformance(run),
    });
    started.push(() => conformanceRuns.close());
    if (options.startForwarding !== false) ctx.forwarding.start();
    // A delivery cut short by the stop stays pending.
    started.push(() => ctx.forwarding.stop());
    const app = await buildApp({
      config,
      ctx,
      mqtt,
      conformanceRuns,
      runs,
      capture,
      logger,
      ...(options.version === undefined ? {} : { version: options.version }),
    });
    // fastify runs preClose once new requests get 503, and onClose once the
    // requests in flight are answered.
    app.addHook('preClose', stopStarted);
    app.addHook('onClose', () => store.close());
    return { app, ctx, mqtt, control, close: () => app.close() };
  } catch (error) {
    await stopStarted();
    await store.close();
    throw error;
  }
}

/** The store of the configuration, open and migrated, its pool (on
 * PostgreSQL) of DATABASE_POOL_SIZE connections. */
export function openApiStore(config: ApiConfig, log: Logger): Promise<Store> {
  return openStore(config, {
    maxConnections: config.databasePoolSize,
    // pg reports an idle connection's error (the server restarted, a proxy
    // closed it) on the pool; the pool drops it and the next query
    // reconnects, so it is worth a warning, not a crash.
    onIdleError: (error) => log.warn({ err: error }, 'an idle PostgreSQL connection failed; it is replaced'),
  });
}

/** The MQTT side over the service's ingestion, accounts and events; resolves
 * once the broker listens, or once the external broker took the first connection. */
function startMqtt(
  ctx: AppContext,
  connection: MqttConnection,
  log: Logger,
  capture: CaptureRing | undefined,
): Promise<MqttService> {
  return MqttService.start({
    ctx,
    topics: new Topics(ctx.config.mqttTopicPrefix),
    clock: ctx.clock,
    connection,
    logger: log,
    ...(capture === undefined ? {} : { capture }),
  });
}

/** The capture ring of CAPTURE_RING_SECONDS and CAPTURE_RING_MB, on the
 * service's clock; none when CAPTURE_RING_SECONDS is 0. */
function captureSource(config: ApiConfig, clock: Clock): CaptureSource | undefined {
  if (config.captureRingSeconds === 0) return undefined;
  return {
    ring: new CaptureRing({
      maxAgeMicros: config.captureRingSeconds * 1_000_000,
      maxBytes: config.captureRingMb * 1024 * 1024,
      nowMicros: captureMicros(clock),
    }),
    application: `parkbench ${packageVersionNear(import.meta.url)} api`,
  };
}

/** The dispatcher sends over `mqtt` and hears from it which boxes are
 * online and which answered. */
function controlDispatcher(ctx: AppContext, mqtt: MqttService, log: Logger): ControlDispatcher {
  const { config } = ctx;
  const control = new ControlDispatcher({
    store: ctx.store,
    clock: ctx.clock,
    send: (moduleId, frame, timeoutMs) => mqtt.sendCommand(moduleId, frame, {}, timeoutMs),
    answerTimeoutMs: config.boxAnswerTimeoutMs,
    pollMs: config.controlPollMs,
    retry: { initialMs: 1_000, maxMs: config.controlRetryMaxMs, factor: 2, jitter: 0.2 },
    logger: log,
    events: ctx.events,
  });
  mqtt.onAvailability((moduleId, online) => control.availability(moduleId, online));
  // A reservation's end lets what the box's queue held back go out at once.
  ctx.reservations.onEnd((moduleId) => control.wake(moduleId));
  mqtt.ingestion.onResponse((response) => control.seen(response.moduleId));
  return control;
}
