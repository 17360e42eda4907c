// buildApp(options) returns the HTTP app, routes registered, not listening:
// the CLI listens, tests inject. It is built last by createService
// (service.ts) from the parts built before it: the services, the MQTT side
// when there is one, the conformance runs, the logger. Without MQTT the open
// route answers 503 mqtt_unavailable.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ApiConfig } from './config/index.js';
import type { AppContext } from './context.js';
import type { ConformanceRuns } from './conformance-runs/index.js';
import type { Runs } from './runs/index.js';
import type { MqttService } from './mqtt/index.js';
import type { CaptureSource } from './capture/index.js';
import { openSmartKeyRoutes, smartKeyRoutes } from './smart-keys/index.js';
import { apiErrorHandler } from './http/error-handler.js';
import { apiFormats } from './http/formats.js';
import { refuseNulCharacters } from './http/nul-characters.js';
import { configureServer, serverOptions } from './http/http-server.js';
import { ApiError, errorBodySchema, oauthErrorBodySchema } from './http/errors.js';
import { benchPageRoutes } from './bench-page/index.js';
import { boxLogRoutes } from './box-logs/index.js';
import { docsRoutes } from './http/docs.js';
import { healthRoutes } from './http/health.js';
import { meRoutes, oauthRoutes, registerDriverRoutes } from './auth/index.js';
import { OPERATOR_PREFIX, operatorRoutes } from './operators/index.js';
import { parkingSessionRoutes, parkingSessionSchema, sessionResponseSchema, smartKeySchema } from './sessions/index.js';
import { paymentErrorPages, payRoutes } from './payments/index.js';
import { publicUserSchema } from './http/schemas.js';

export interface BuildAppOptions {
  config: ApiConfig;
  /** The services routes share (context.ts). */
  ctx: AppContext;
  /** The MQTT side (broker or client, ingestion); absent, the routes that
   * reach a box answer 503 mqtt_unavailable. */
  mqtt: MqttService | undefined;
  /** The conformance runs of the operator API, in this process's memory. */
  conformanceRuns: ConformanceRuns;
  /** The kept runs (api/runs/). */
  runs: Runs;
  /** Each box's recent MQTT traffic; absent without MQTT or with
   * CAPTURE_RING_SECONDS=0 (its route says which). */
  capture?: CaptureSource | undefined;
  /** The process's logger (app-logger.ts); none: the app logs nothing. */
  logger: FastifyBaseLogger | undefined;
  /** Version shown in the OpenAPI document. */
  version?: string;
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, ctx, mqtt, conformanceRuns, runs } = options;
  const app = Fastify({
    ...(options.logger === undefined ? {} : { loggerInstance: options.logger }),
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
    ...serverOptions(config, paymentErrorPages),
  });
  configureServer(app, config, paymentErrorPages);

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
  await app.register(
    (scope, _options, done) => {
      operatorRoutes(scope, ctx, mqtt, { conformanceRuns, runs }, options.capture);
      done();
    },
    { prefix: OPERATOR_PREFIX },
  );
  openSmartKeyRoutes(app, ctx, mqtt);
  return app;
}
