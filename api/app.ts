// buildApp(options) returns the HTTP app, routes registered, not listening:
// the CLI listens, tests inject. The database opens (and migrates) while the
// app loads and closes with it. The MQTT side starts beside it, not inside
// (startService / startMqtt, server.ts); until then the open route answers
// 503 mqtt_unavailable.
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { ApiConfig } from './config.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { createContext, type AppContext } from './context.js';
import { ConformanceRuns } from './conformance-runs/runs.js';
import type { ControlDispatcher } from './control/dispatcher.js';
import type { MqttService } from './mqtt/mqtt-service.js';
import { openSmartKeyRoutes } from './routes/open-smart-key.js';
import { onPaymentOutcome } from './sessions/service.js';
import { databasePlugin } from './db/plugin.js';
import { apiErrorHandler } from './error-handler.js';
import { apiFormats } from './formats.js';
import { redactedError, redactedUrlField, redactUrl } from './log-redaction.js';
import { refuseNulCharacters } from './nul-characters.js';
import { configureServer, serverOptions } from './http-server.js';
import { ApiError, errorBodySchema, oauthErrorBodySchema } from './errors.js';
import { benchPageRoutes } from './routes/bench-page.js';
import { boxLogRoutes } from './routes/box-logs.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { meRoutes } from './routes/me.js';
import { oauthRoutes } from './routes/oauth.js';
import { OPERATOR_PREFIX, operatorRoutes } from './routes/operator/index.js';
import { parkingSessionRoutes } from './routes/parking-sessions.js';
import { payRoutes } from './routes/pay.js';
import { smartKeyRoutes } from './routes/smart-keys.js';
import { registerDriverRoutes } from './routes/register-driver.js';
import { publicUserSchema } from './schemas.js';
import { parkingSessionSchema, sessionResponseSchema, smartKeySchema } from './sessions/schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** What routes share (config, clock, repositories): for in-process
     * callers such as MQTT ingestion, and for tests. */
    ctx: AppContext;
    /** The MQTT side (broker or client, ingestion), once startMqtt (server.ts) started it. */
    mqtt?: MqttService;
    /** Delivers queued control commands (REVOKE, SET_ISSUER), once startMqtt (server.ts) started it. */
    control?: ControlDispatcher;
  }
}

export interface BuildAppOptions {
  config: ApiConfig;
  /** Injected time (token expiry, login windows); the system clock by default. */
  clock?: Clock;
  /** fastify's logger option: false in tests, pino options from the CLI. */
  logger?: FastifyServerOptions['logger'];
  /** Version shown in the OpenAPI document. */
  version?: string;
  /** Start the forwarding worker (default true); tests drive it with
   * `app.ctx.forwarding.runOnce()` or start it on a fake clock. */
  startForwarding?: boolean;
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: withLogRedaction(options.logger ?? false),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    ajv: {
      customOptions: {
        // One detail per bad field, and no silent type coercion of JSON bodies
        // (a number where a string is due is a 422, not a string).
        allErrors: true,
        coerceTypes: false,
        // Nullable fields are written `type: [..., 'null']`, as OpenAPI 3.1 does.
        allowUnionTypes: true,
        formats: apiFormats,
      },
    },
    return503OnClosing: true,
    // avvio's 10 s default was seen to fire while @fastify/swagger-ui loaded
    // on a loaded 2-core machine (a failed start, not a hung plugin); a
    // plugin that really hangs is still reported, after a minute.
    pluginTimeout: 60_000,
    ...serverOptions(config),
  });
  configureServer(app, config);
  await app.register(databasePlugin, { config });
  const ctx = createContext(config, options.clock ?? systemClock, app.store, {
    forwarding: app.log.child({ component: 'api:forwarding' }),
    events: app.log.child({ component: 'api:events' }),
  });
  app.decorate('ctx', ctx);
  // The provider reports outcomes; the session service decides what they change.
  ctx.paymentProvider.onOutcome((payment, on) => onPaymentOutcome(ctx, on, payment));
  // Stopped before the database closes (onClose); a delivery cut short stays pending.
  app.addHook('preClose', async () => {
    await ctx.forwarding.stop();
  });
  const { eventRelay } = ctx;
  if (eventRelay !== undefined) {
    await eventRelay.start();
    app.addHook('preClose', () => eventRelay.close());
  }

  // Only JSON (and, on the OAuth endpoints, forms): text/plain gets 415.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('user', null);
  app.addSchema(errorBodySchema);
  app.addSchema(oauthErrorBodySchema);
  app.addSchema(publicUserSchema);
  app.addSchema(smartKeySchema);
  app.addSchema(parkingSessionSchema);
  app.addSchema(sessionResponseSchema);
  app.setErrorHandler(apiErrorHandler);
  refuseNulCharacters(app);
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`);
    void reply.status(404).send(error.body());
  });

  await docsRoutes(app, options.version ?? '0.0.0');
  await benchPageRoutes(app);
  healthRoutes(app, ctx);
  registerDriverRoutes(app, ctx);
  meRoutes(app, ctx);
  parkingSessionRoutes(app, ctx);
  smartKeyRoutes(app, ctx);
  await app.register((scope) => oauthRoutes(scope, ctx));
  await app.register((scope) => payRoutes(scope, ctx));
  boxLogRoutes(app, ctx);
  // Conformance runs from the operator API, in this process's memory. Its
  // preClose is added before startMqtt's (server.ts), so fastify runs it
  // first: each run is aborted and puts the box's issuer keys back while the
  // broker is still up.
  const conformanceRuns = new ConformanceRuns({
    store: ctx.store,
    clock: ctx.clock,
    config,
    logger: app.log.child({ component: 'api:conformance' }),
    // The bench page follows a run through the event stream's `conformance` events.
    onChange: (run) => ctx.events.publishConformance(run),
  });
  app.addHook('preClose', async () => {
    await conformanceRuns.close();
  });
  await app.register(
    (scope, _options, done) => {
      operatorRoutes(scope, ctx, () => app.mqtt, conformanceRuns);
      done();
    },
    { prefix: OPERATOR_PREFIX },
  );
  // The MQTT side, once startMqtt (server.ts) has decorated the app with it.
  openSmartKeyRoutes(app, ctx, () => app.mqtt);
  if (options.startForwarding !== false) {
    app.addHook('onReady', (done) => {
      ctx.forwarding.start();
      done();
    });
  }
  return app;
}

/** The request logger prints URLs, the error logger messages and node's
 * bytes of a bad request, the forwarding worker its URL: every secret query
 * parameter in them (`?access_token=`, an event stream's `?ticket=`, ...) is
 * printed `[redacted]` (log-redaction.ts). */
function withLogRedaction(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return logger;
  const options = logger === true ? {} : logger;
  return {
    ...options,
    serializers: {
      ...options.serializers,
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: redactUrl(request.url),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket.remotePort,
      }),
      err: redactedError,
      url: redactedUrlField,
    },
  };
}
