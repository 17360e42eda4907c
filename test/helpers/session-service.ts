// The session service over one store, as an API process builds it
// (api/context.ts), without HTTP: for the tests of creations, finalizes and
// payments on both engines, and of races between two stores on one database.
import { BoxRepository } from '../../api/boxes/repository.js';
import { GroupCommit } from '../../api/db/group-commit.js';
import type { Store } from '../../api/db/store.js';
import { noEvents } from '../../api/events/types.js';
import { ParkingRepository } from '../../api/parkings/repository.js';
import { PaymentRepository } from '../../api/payments/repository.js';
import { SandboxProvider } from '../../api/payments/sandbox.js';
import { type SessionCreateLimits, SessionCreateLimiter } from '../../api/sessions/create-limit.js';
import { sessionCreationOf } from '../../api/sessions/creation-of.js';
import { SessionRepository } from '../../api/sessions/repository.js';
import { onPaymentOutcome, type SessionCreateDeps } from '../../api/sessions/service.js';
import { SmartKeyRepository } from '../../api/smart-keys/repository.js';
import type { Clock } from '../../lib/clock.js';
import { insertBox, insertParking } from './store-rows.js';

/** SESSION_CREATE_BURST and SESSION_CREATE_RATE_PER_MINUTE's defaults. */
const DEFAULT_LIMITS: SessionCreateLimits = { burst: 20, intervalMs: 2_000 };

/** The session service on `store` with a sandbox provider (`provider`, to pay). */
export function sessionService(
  store: Store,
  clock: Clock,
  limits: SessionCreateLimits = DEFAULT_LIMITS,
): SessionCreateDeps & { provider: SandboxProvider } {
  const sessions = new SessionRepository(store);
  const payments = new PaymentRepository(store);
  const provider = new SandboxProvider({
    store,
    payments,
    clock,
    publicUrl: 'http://bench.test',
    returnSchemes: [],
    parkingNameOf: () => Promise.resolve('P'),
  });
  const parkings = new ParkingRepository(store);
  const boxes = new BoxRepository(store);
  const smartKeys = new SmartKeyRepository(store);
  const sessionCreateLimiter = new SessionCreateLimiter(store.dialect, store.kysely, limits);
  const deps = {
    events: noEvents,
    store,
    config: { exitKeyMinutes: 10 },
    parkings,
    boxes,
    sessions,
    payments,
    smartKeys,
    paymentProvider: provider,
    sessionCreation: sessionCreationOf(store, {
      clock,
      parkings,
      boxes,
      sessions,
      smartKeys,
      sessionCreateLimiter,
      groupCommit: new GroupCommit(store),
      paymentProvider: provider,
    }),
    clock,
    provider,
  };
  provider.onOutcome((payment, on) => onPaymentOutcome(deps, on, payment));
  return deps;
}

/** A sealed parking with an entrance (module 1) and an exit box (module 2); its id. */
export async function parkingWithBoxes(store: Store, nowMs: number): Promise<number> {
  const parkingId = await insertParking(store, { created_at: nowMs });
  await insertBox(store, { moduleId: 1, parkingId, direction: 'entrance', createdAt: nowMs });
  await insertBox(store, { moduleId: 2, parkingId, direction: 'exit', createdAt: nowMs });
  return parkingId;
}
