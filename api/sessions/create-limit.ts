// How many parking sessions a driver may create: a token bucket per driver,
// SESSION_CREATE_BURST tokens, one back every 60,000 / SESSION_CREATE_RATE_PER_MINUTE
// ms; a creation takes one. Every session fills the operator's event stream
// and the snapshot of the day, so one self-registered driver must not create
// thousands (create, finalize, create again: the one-open-session rule
// alone allows it).
//
// The bucket is one integer in the store (session_create_limits, migration
// 17), so every API process on the database shares it: `full_at`, when the
// bucket is full again. At `now` it holds burst - (full_at - now) / interval
// tokens (all of them once full_at has passed), so a token is there when
// full_at <= now + (burst - 1) * interval, and taking it moves full_at to
// max(full_at, now) + interval. Check and take are one statement (an upsert
// whose update is conditional), run inside the creation's own transaction:
// no extra commit on the hot path, a creation rolled back gives its token
// back, and two creations at once cannot both take the last token (SQLite
// has one writer; PostgreSQL locks the driver's row for the upsert).
import { sql } from 'kysely';
import { CompiledOnce, greatest, type Dialect, type Executor } from '../db/store.js';

export interface SessionCreateLimits {
  /** Tokens of a full bucket: creations at once. */
  readonly burst: number;
  /** One token back every this many ms. */
  readonly intervalMs: number;
}

/** The limits of SESSION_CREATE_BURST and SESSION_CREATE_RATE_PER_MINUTE. */
export function sessionCreateLimitsOf(config: {
  sessionCreateBurst: number;
  sessionCreateRatePerMinute: number;
}): SessionCreateLimits {
  return { burst: config.sessionCreateBurst, intervalMs: Math.ceil(60_000 / config.sessionCreateRatePerMinute) };
}

export class SessionCreateLimiter {
  readonly #take: CompiledOnce<{ full_at: number }>;
  readonly #fullAt: CompiledOnce<{ full_at: number }>;

  constructor(
    dialect: Dialect,
    builder: Executor,
    readonly limits: SessionCreateLimits,
  ) {
    // Built with placeholder values in the order `take` gives them (CompiledOnce).
    this.#take = new CompiledOnce(
      builder
        .insertInto('session_create_limits')
        .values({ user_id: 0, full_at: 0 })
        .onConflict((oc) =>
          oc
            .column('user_id')
            .doUpdateSet({
              full_at: sql<number>`${greatest<number>(dialect, sql.ref('session_create_limits.full_at'), sql.val(0))} + ${sql.val(0)}`,
            })
            .where('session_create_limits.full_at', '<=', 0),
        )
        .returning('full_at'),
    );
    this.#fullAt = new CompiledOnce(
      builder.selectFrom('session_create_limits').select('full_at').where('user_id', '=', 0),
    );
  }

  /** Takes a token of the driver's bucket in `on` (the creation's
   * transaction): 0 when taken, else the ms until one is back (nothing taken). */
  async take(on: Executor, userId: number, nowMs: number): Promise<number> {
    const { burst, intervalMs } = this.limits;
    const latest = nowMs + (burst - 1) * intervalMs;
    const taken = await this.#take.run(on, [userId, nowMs + intervalMs, nowMs, intervalMs, latest]);
    if (taken.length > 0) return 0;
    const [row] = await this.#fullAt.run(on, [userId]);
    return Math.max(1, (row?.full_at ?? latest) - latest);
  }
}
