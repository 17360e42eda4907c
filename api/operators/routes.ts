// The operator HTTP API: one fastify plugin registered with the prefix
// /api/operator. Its onRequest hook authenticates every route of the prefix,
// and its unknown paths too (an unauthenticated probe learns nothing of
// which routes exist): an operator token (`parkbench admin operator add`),
// else 403 for a driver's token, 401 for none or a bad one
// (api/operators/auth.ts).
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../http/errors.js';
import { operatorAuth, type OperatorAuthDeps } from './auth.js';
import { type ConformanceRuns, junitOfRun, operatorConformanceRoutes } from '../conformance-runs/index.js';
import { runReadRoutes, runRecordRoutes, type Runs } from '../runs/index.js';
import { type CaptureRouteDeps, type CaptureSource, operatorCaptureRoutes } from '../capture/index.js';
import type { MqttService } from '../mqtt/index.js';
import { guardReservation, reservationRoutes, type ReservationRouteDeps } from '../reservations/index.js';
import { operatorActionRoutes, type OperatorActionRouteDeps } from './action-routes.js';
import { operatorBoxCommandRoutes, type OperatorBoxCommandRouteDeps } from './box-command-routes.js';
import { operatorBoxSimRoutes, type OperatorBoxSimRouteDeps } from './box-sim-routes.js';
import { operatorControlRoutes, type OperatorControlRouteDeps } from './control-routes.js';
import { operatorEventRoutes, type OperatorEventRouteDeps } from './stream/routes.js';
import { operatorReadRoutes, type OperatorReadRouteDeps } from './read-routes.js';

export const OPERATOR_PREFIX = '/api/operator';

export type OperatorRouteDeps = OperatorAuthDeps &
  OperatorReadRouteDeps &
  OperatorActionRouteDeps &
  OperatorControlRouteDeps &
  OperatorBoxCommandRouteDeps &
  OperatorEventRouteDeps &
  OperatorBoxSimRouteDeps &
  ReservationRouteDeps &
  CaptureRouteDeps;

/** The runs: those the operator API starts (api/conformance-runs/) and
 * those kept (api/runs/). */
export interface OperatorRuns {
  conformanceRuns: ConformanceRuns;
  runs: Runs;
}

/** `mqtt`: the MQTT side, absent when the service runs without one (api/service.ts);
 * `runs`: the runs of the operator API (OperatorRuns);
 * `capture`: the capture ring, absent without MQTT or when it is off (api/capture/). */
export function operatorRoutes(
  scope: FastifyInstance,
  ctx: OperatorRouteDeps,
  mqtt: MqttService | undefined,
  runs: OperatorRuns,
  capture: CaptureSource | undefined,
): void {
  scope.decorateRequest('operator', null);
  scope.addHook('onRequest', operatorAuth(ctx));
  scope.setNotFoundHandler((request, reply) => {
    const error = new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`);
    void reply.status(404).send(error.body());
  });
  operatorReadRoutes(scope, ctx);
  operatorActionRoutes(scope, ctx);
  operatorControlRoutes(scope, ctx);
  operatorBoxCommandRoutes(scope, ctx, mqtt);
  operatorBoxSimRoutes(scope, ctx, mqtt);
  operatorConformanceRoutes(scope, runs.conformanceRuns, mqtt, ctx);
  runReadRoutes(scope, { runs: runs.runs, junitOf: junitOfRun });
  runRecordRoutes(
    scope,
    {
      runs: runs.runs,
      checkReservation: (moduleId, request) => guardReservation(ctx, moduleId, request),
    },
    () => ctx.clock.now(),
  );
  reservationRoutes(scope, ctx);
  operatorCaptureRoutes(scope, ctx, capture);
  // Its own child scope: @fastify/sse (registered there) must see its route.
  void scope.register((child) => operatorEventRoutes(child, ctx));
}
