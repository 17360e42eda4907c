// A parking that forwards its box logs to a local receiver, a driver with a
// smart key for it, and box logs to post: what the forwarding tests share.
import type { ExecutionContext } from 'ava';
import type { AppLoggerOptions } from '../../api/app-logger.js';
import type { ApiConfig } from '../../api/config/index.js';
import { setForwarding } from '../../api/forwarding/parking-settings.js';
import type { AccessMode } from '../../api/parkings/repository.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { loggedIn, testApp, type TestApp } from './api-app.js';
import { boxAnswer, boxLog, postBoxLogs } from './box-logs.js';
import { createSession, seedParking, type SeededParking } from './parking.js';
import { ok, startReceiver, type Answer, type Receiver } from './receiver.js';

export interface Forwarding {
  app: TestApp;
  token: string;
  parking: SeededParking;
  keyId: number;
  command: Buffer;
  /** The parking's whsec_ secret, as `admin parking forwarding` showed it. */
  secret: string;
}

export interface ForwardingSetupOptions {
  dir?: string;
  startForwarding?: boolean;
  accessMode?: AccessMode;
  forwardUnverified?: boolean;
  config?: Partial<ApiConfig>;
  clock?: FakeClock;
  logger?: AppLoggerOptions;
}

/** A fake clock at the real time (whole seconds): the receiver's library
 * checks webhook-timestamp against its own clock. */
export function clockAtNow(): FakeClock {
  return new FakeClock(Math.floor(Date.now() / 1000) * 1000);
}

/** The app on a clock at the real time; private addresses allowed (the receivers are on 127.0.0.1) unless `config` says otherwise. */
export async function forwardingSetup(
  t: ExecutionContext,
  url: string,
  options: ForwardingSetupOptions = {},
): Promise<Forwarding> {
  const clock = options.clock ?? clockAtNow();
  const app = await testApp(
    t,
    { tokenTtlSeconds: 86_400 * 30, forwardingAllowPrivate: true, ...options.config },
    {
      dir: options.dir,
      startForwarding: options.startForwarding ?? false,
      clock,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  );
  const tokens = await loggedIn(app);
  const parking = await seedParking(app, { accessMode: options.accessMode ?? 'sealed' });
  const setting = await setForwarding(
    app.ctx.store,
    parking.id,
    { url, expose: true, forwardUnverified: options.forwardUnverified ?? false },
    clock.now(),
  );
  const body = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<{ smart_key: { id: number; access_command: string } }>();
  return {
    app,
    token: tokens.access_token,
    parking,
    keyId: body.smart_key.id,
    command: Buffer.from(body.smart_key.access_command, 'base64'),
    secret: setting.forwarding_secret ?? '',
  };
}

let second = 0;
/** `count` logs, each with its own created_at so the receiver can tell them apart. */
export function logs(
  s: Forwarding,
  count: number,
  verified = true,
  extra: { command_decrypted?: string } = {},
): { box_log: Record<string, unknown> }[] {
  return Array.from({ length: count }, () => {
    second += 1;
    const createdAt = new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString().slice(0, 19).replace('T', ' ');
    const log = boxLog({
      foUserId: 1,
      smartKeyId: s.keyId,
      box: s.parking.entrance,
      parkingId: s.parking.id,
      command: s.command,
      response: verified ? boxAnswer(s.parking.entrance, s.command) : null,
      createdAt,
    });
    Object.assign(log.box_log, extra);
    return log;
  });
}

export async function send(s: Forwarding, entries: { box_log: Record<string, unknown> }[]): Promise<void> {
  const response = await postBoxLogs(s.app, s.token, { box_logs: entries });
  if (response.statusCode !== 201) throw new Error(response.body);
}

/** Every record the receiver got, in order. */
export const records = (receiver: Receiver): Record<string, unknown>[] =>
  receiver.received.flatMap((request) => JSON.parse(request.body) as Record<string, unknown>[]);

/** Steps the fake clock a second at a time, letting real I/O (the local
 * receiver) happen in between, until `done` holds. */
export async function stepUntil(
  app: TestApp,
  done: () => boolean | Promise<boolean>,
  maxSteps = 100,
): Promise<boolean> {
  for (let step = 0; step < maxSteps; step += 1) {
    if (await done()) return true;
    await app.clock.advanceAsync(1_000);
    await new Promise((resolve) => setTimeout(resolve, 10)); // real I/O of the local receiver
  }
  return await done();
}

/** A receiver on the test's clock (its library checks webhook-timestamp against it) and a parking forwarding to it. */
export async function withReceiver(
  t: ExecutionContext,
  answers: Answer[] = [ok],
  options: ForwardingSetupOptions = {},
): Promise<{ s: Forwarding; receiver: Receiver }> {
  const clock = options.clock ?? clockAtNow();
  const receiver = await startReceiver(t, answers, clock);
  return { s: await forwardingSetup(t, receiver.url, { ...options, clock }), receiver };
}
