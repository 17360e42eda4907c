// A running service for the command line's service commands (`reserve`,
// `release`, `--record`): the real API listening on an ephemeral port, on a
// real SQLite file and the system clock (a reservation's wait and expiry run
// in real time, as the CLI's child processes do), two operators, and a
// parking with one box. `call` is the operator API over inject, for what
// the test reads or does beside the CLI.
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { LightMyRequestResponse } from 'fastify';
import { configWith } from '../../api/config/index.js';
import { addOperator } from '../../api/operators/accounts.js';
import { createService, type Service } from '../../api/service.js';
import { systemClock } from '../../lib/clock.js';
import { tempDir, TEST_SCRYPT_LOG2_N } from './api-app.js';
import { addParking } from './control-bench.js';

export interface OperatorService extends Pick<Service, 'app' | 'ctx'> {
  /** The base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The token of the operator `ci`, whom the CLI runs as. */
  readonly token: string;
  /** The token of another operator, `alice`. */
  readonly aliceToken: string;
  /** The box's module_id (a box of a sealed parking). */
  readonly moduleId: number;
  /** The environment of a CLI process that speaks to this service as `ci` (no CI runner's variables). */
  env(extra?: Record<string, string>): Record<string, string>;
  call(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    options?: { token?: string; payload?: unknown; reservation?: string },
  ): Promise<LightMyRequestResponse>;
}

/** The variables of CI runners a recorded run reads: cleared, so a test run under CI sees none but its own. */
export const NO_CI: Record<string, string> = {
  CI: '',
  CI_JOB_URL: '',
  GITHUB_SERVER_URL: '',
  GITHUB_REPOSITORY: '',
  GITHUB_RUN_ID: '',
  BUILD_URL: '',
  PARKBENCH_URL: '',
  PARKBENCH_OPERATOR_TOKEN: '',
  PARKBENCH_RESERVATION: '',
};

export async function operatorService(
  t: ExecutionContext,
  options: { moduleId?: number } = {},
): Promise<OperatorService> {
  const dir = tempDir(t);
  const config = configWith({ databasePath: join(dir, 'db', 'test.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N });
  const { app, ctx } = await createService(config, { clock: systemClock, startForwarding: false, startControl: false });
  t.teardown(() => app.close());
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const { token } = await addOperator(ctx.store, 'ci', Date.now());
  const { token: aliceToken } = await addOperator(ctx.store, 'alice', Date.now());
  const moduleId =
    options.moduleId ?? (await addParking({ ctx, clock: systemClock }, { boxes: ['entrance'] })).moduleIds[0];
  if (moduleId === undefined) throw new Error('no box added');
  if (options.moduleId !== undefined) await addBox(ctx, options.moduleId);
  return {
    app,
    ctx,
    url,
    token,
    aliceToken,
    moduleId,
    env: (extra = {}) => ({ ...NO_CI, PARKBENCH_URL: url, PARKBENCH_OPERATOR_TOKEN: token, ...extra }),
    call: (method, path, call = {}) =>
      app.inject({
        method,
        url: path,
        headers: {
          authorization: `Bearer ${call.token ?? token}`,
          ...(call.reservation === undefined ? {} : { 'parkbench-reservation': call.reservation }),
        },
        ...(call.payload === undefined ? {} : { payload: call.payload as string }),
      }),
  };
}

/** A box of this module_id in a parking of its own: a simulated box's provisioning file names it. */
async function addBox(ctx: Service['ctx'], moduleId: number): Promise<void> {
  const parking = await addParking({ ctx, clock: systemClock }, { boxes: [] });
  await ctx.boxes.insert(
    {
      moduleId,
      parkingId: parking.id,
      direction: 'entrance',
      macAddress:
        `02:50:42:00:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`.toUpperCase(),
      boxKey: '00'.repeat(16),
      mqttPasswordHash: 'x',
    },
    Date.now(),
  );
}
