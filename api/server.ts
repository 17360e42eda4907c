// The API service: the HTTP app of buildApp (app.ts), and beside it, when
// asked, the MQTT side: the embedded broker or a client of an external one
// (ingestion of box responses, commands to boxes) and the control-command
// dispatcher over it. buildApp builds the HTTP app only; the CLI (`parkbench
// api`, `parkbench start`) and the tests start the service here, then listen
// or inject. Call before the app is ready: it decorates and adds hooks.
import type { FastifyInstance } from 'fastify';
import { Topics } from '../lib/mqtt-topics.js';
import { buildApp, type BuildAppOptions } from './app.js';
import { ControlDispatcher } from './control/dispatcher.js';
import { MqttService, type MqttConnection } from './mqtt/mqtt-service.js';

export interface MqttOptions {
  /** The embedded broker or an external one. */
  connection: MqttConnection;
  /** Start the control-command dispatcher's poll (default true); tests on
   * a fake clock that leaps months leave it off (each poll schedules the
   * next one) unless they test it. */
  startControl?: boolean;
}

export interface ServiceOptions extends BuildAppOptions {
  /** MQTT: the embedded broker or an external one. Absent: the HTTP app alone. */
  mqtt?: MqttConnection;
  /** See MqttOptions.startControl. */
  startControl?: boolean;
}

/** buildApp, then the MQTT side beside it when `mqtt` is given. */
export async function startService(options: ServiceOptions): Promise<FastifyInstance> {
  const { mqtt, startControl, ...appOptions } = options;
  const app = await buildApp(appOptions);
  if (mqtt === undefined) return app;
  try {
    await startMqtt(app, { connection: mqtt, ...(startControl === undefined ? {} : { startControl }) });
  } catch (error) {
    await app.close();
    throw error;
  }
  return app;
}

/** Starts MQTT beside `app` (decorated as `app.mqtt`, which the open route
 * reaches) and the control dispatcher (`app.control`); both stop when the
 * app closes, before the database does. */
export async function startMqtt(app: FastifyInstance, options: MqttOptions): Promise<MqttService> {
  const { ctx } = app;
  const { config } = ctx;
  const mqtt = await MqttService.start({
    ctx,
    topics: new Topics(config.mqttTopicPrefix),
    clock: ctx.clock,
    connection: options.connection,
    logger: app.log,
  });
  app.decorate('mqtt', mqtt);
  const control = new ControlDispatcher({
    store: ctx.store,
    clock: ctx.clock,
    send: (moduleId, frame, timeoutMs) => mqtt.sendCommand(moduleId, frame, {}, timeoutMs),
    answerTimeoutMs: config.boxAnswerTimeoutMs,
    pollMs: config.controlPollMs,
    retry: { initialMs: 1_000, maxMs: config.controlRetryMaxMs, factor: 2, jitter: 0.2 },
    logger: app.log,
    events: ctx.events,
  });
  app.decorate('control', control);
  mqtt.onAvailability((moduleId, online) => control.availability(moduleId, online));
  mqtt.ingestion.onResponse((response) => control.seen(response.moduleId));
  if (options.startControl !== false) {
    app.addHook('onReady', (done) => {
      control.start();
      done();
    });
  }
  // Stopped before the database closes (preClose; the database closes on
  // onClose): no box log is half-written.
  app.addHook('preClose', async () => {
    control.stop();
    await mqtt.close();
  });
  return mqtt;
}
