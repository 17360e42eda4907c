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
// whose update is conditional), run inside the creation's own transaction
// (on PostgreSQL a part of the creation's one writing statement,
// creation-postgres.ts): no extra commit on the hot path, a creation rolled
// back gives its token back, and two creations at once cannot both take the
// last token (SQLite has one writer; PostgreSQL locks the driver's row for
// the upsert).
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
    // Built with placeholder values in the order of takeValues (CompiledOnce).
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
    const taken = await this.#take.run(on, this.takeValues(userId, nowMs));
    if (taken.length > 0) return 0;
    return this.waitAfterRefusal(on, userId, nowMs);
  }

  /** After a take that found no token: the ms until one is back, at least 1. */
  async waitAfterRefusal(on: Executor, userId: number, nowMs: number): Promise<number> {
    const [row] = await this.#fullAt.run(on, [userId]);
    return Math.max(1, this.waitOf(row?.full_at, nowMs));
  }

  /** The ms until the driver's bucket has a token, 0 when it has one at
   * `nowMs`, from its full_at as read (undefined: no row yet, a full bucket). */
  waitOf(fullAt: number | undefined, nowMs: number): number {
    const latest = this.latestFullAt(nowMs);
    return fullAt === undefined || fullAt <= latest ? 0 : Math.max(1, fullAt - latest);
  }

  /** At `nowMs` a token is there while full_at is at most this. */
  latestFullAt(nowMs: number): number {
    const { burst, intervalMs } = this.limits;
    return nowMs + (burst - 1) * intervalMs;
  }

  /** take's statement (its values: takeValues), for a statement that takes
   * the token as one of its parts (a session's creation on PostgreSQL,
   * creation-postgres.ts): it returns a row when the token was taken. */
  get takeSql(): string {
    return this.#take.sql;
  }

  /** The values of takeSql: a token of `userId`'s bucket at `nowMs`. */
  takeValues(userId: number, nowMs: number): unknown[] {
    const { intervalMs } = this.limits;
    return [userId, nowMs + intervalMs, nowMs, intervalMs, this.latestFullAt(nowMs)];
  }
}
