// A session's creation on SQLite (creation.ts). The reads are the
// repositories' three: SQLite's statements cost no round trip, and three of
// them cost less than one that builds the boxes' JSON. The writes are one
// unit of the group commit (api/db/group-commit.ts): the creations of one
// turn of the event loop share a transaction, each in a savepoint of its
// own, so under load a creation does not pay a BEGIN and a COMMIT of its
// own; the group's transaction begins IMMEDIATE, so another process waits
// instead of failing mid-way. The driver's token is taken in that
// transaction: a creation rolled back gives it back.
import type { BoxRepository, BoxRow } from '../boxes/index.js';
import type { GroupCommit } from '../db/group-commit.js';
import type { ParkingRepository, ParkingRow } from '../parkings/index.js';
import type { PaymentProvider } from '../payments/index.js';
import { type MintDeps, mintSmartKey } from '../smart-keys/index.js';
import type { SessionCreateLimiter } from './create-limit.js';
import {
  type CreationReads,
  keyRequestOf,
  paymentRequestOf,
  planCreation,
  type PreparedCreation,
  type SessionCreation,
  type WrittenSession,
} from './creation.js';
import { SessionCreateLimited } from './errors.js';
import type { SessionRepository } from './repository.js';

export interface SqliteCreationDeps extends MintDeps {
  parkings: Pick<ParkingRepository, 'findById'>;
  boxes: Pick<BoxRepository, 'listOfParking'>;
  sessions: Pick<SessionRepository, 'findOpenOfUser' | 'insertRow'>;
  sessionCreateLimiter: Pick<SessionCreateLimiter, 'take' | 'limits'>;
  groupCommit: Pick<GroupCommit, 'run'>;
  paymentProvider: Pick<PaymentProvider, 'createPayment'>;
}

export class SqliteSessionCreation implements SessionCreation {
  constructor(private readonly deps: SqliteCreationDeps) {}

  async prepare(parkingId: number, userId: number): Promise<PreparedCreation | undefined> {
    const { parkings, boxes, sessions } = this.deps;
    const parking = await parkings.findById(parkingId);
    if (!parking) return undefined;
    const parkingBoxes = await boxes.listOfParking(parking.id);
    const open = await sessions.findOpenOfUser(userId);
    return new SqlitePreparedCreation(
      this.deps,
      userId,
      parking,
      parkingBoxes,
      open && { id: open.id, state: open.state },
    );
  }
}

/** A class, not an object with a closure: see CreationPlan. */
class SqlitePreparedCreation implements PreparedCreation {
  constructor(
    private readonly deps: SqliteCreationDeps,
    private readonly userId: number,
    readonly parking: ParkingRow,
    readonly boxes: BoxRow[],
    readonly openSession: CreationReads['openSession'],
  ) {}

  write(): Promise<WrittenSession | undefined> {
    const { deps, userId, parking, boxes } = this;
    return deps.groupCommit.run(async (tx) => {
      const now = deps.clock.now();
      const wait = await deps.sessionCreateLimiter.take(tx, userId, now);
      if (wait > 0) throw new SessionCreateLimited(wait, deps.sessionCreateLimiter.limits);
      const plan = planCreation(userId, parking, boxes, now);
      const session = await deps.sessions.insertRow(plan.session, now, tx);
      // The unique index caught a concurrent creation (another process, say): no session written.
      if (session === undefined) return undefined;
      const key = await mintSmartKey(deps, tx, keyRequestOf(plan, session.id));
      const payment = await deps.paymentProvider.createPayment(paymentRequestOf(plan, session.id), tx);
      return { session, key, payment };
    });
  }
}
