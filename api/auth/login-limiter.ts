// Limits failed logins per username and per client address, in sliding
// windows on an injected clock. The counts live in the store (table
// login_attempts), so every API process on one database shares them: two
// processes do not give a guesser twice the tries. Only failures count; a
// success clears its username's failures but not its address's, so one good
// account cannot be used to reset an address that is guessing others.
//
// An attempt takes a slot in both windows BEFORE its password is hashed and
// holds it while in flight: a check before the ~100 ms hash and a failure
// recorded after it would let a concurrent burst of any size through the
// check. The check and the take are one transaction, serialized per key
// across processes: on PostgreSQL by transaction-scoped advisory locks on the
// two keys (taken in a fixed order, so two attempts never wait on each other
// crosswise), on SQLite by the write lock the transaction takes at BEGIN
// IMMEDIATE (api/db/kysely-sqlite.ts). A failure keeps its rows, marked
// failed; a success or an attempt ended without a verdict deletes its own.
//
// Those transactions run one at a time in each process (OneAtATime), so a
// burst of logins holds one pool connection at the locks, not one per
// attempt, and waits at most the lock wait (DATABASE_BUSY_TIMEOUT_MS) in
// the queue and at the lock together (PostgreSQL's lock_timeout, set for the
// transaction); past it the attempt is refused as busy: 503 with
// Retry-After, its password never hashed.
//
// Retry-After counts failures only: a refused attempt is told when the
// max-th newest failure leaves the window. When failures alone leave room
// and attempts in flight fill it, each of those ends within a login (a
// hash), and gives its slot back unless it fails: then 1 s.
//
// A process that dies mid-login (or cannot write an attempt's end: the
// database went away) leaves its rows in flight: each row says when
// it stops counting (abandoned_at, MAX_LOGIN_MS after its start). Rows that no
// longer count are pruned by the process itself, at most every PRUNE_EVERY_MS
// or PRUNE_EVERY_ATTEMPTS, with a cap on the rows kept (MAX_ROWS).
import { CompiledQuery } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { DEFAULTS } from '../config/index.js';
import { OneAtATime } from '../db/one-at-a-time.js';
import { CompiledOnce, type Executor, type Store } from '../db/store.js';

export interface LoginLimits {
  maxFailuresPerUsername: number;
  maxFailuresPerAddress: number;
  windowMs: number;
}

/**
 * How long an attempt may stay in flight and still count, ms: a row in flight
 * past it belongs to a process that died mid-login (a crash, SIGKILL) and
 * would otherwise hold its user's or address's slot for the whole window. Two
 * minutes is far above a real login (scrypt at the highest SCRYPT_LOG2_N, 20,
 * is about a second; the database waits at most DATABASE_BUSY_TIMEOUT_MS, 5 s
 * by default, at the start and at the end; a burst queues hashes on libuv's
 * four threads for seconds at most, since the limits admit few), yet frees a
 * dead process's slots long before a 15-minute window would. An attempt that
 * does run longer only stops counting while it runs: its failure still marks
 * it failed, and it counts again.
 */
export const MAX_LOGIN_MS = 120_000;

/**
 * Rows kept at most (about, over all processes); past it the oldest go first,
 * in the window or not: a flood of attempts from many addresses must not grow
 * the table without bound. As the in-memory limiter's 100,000 keys per window,
 * an attacker who gets this many attempts admitted within one window erases
 * the oldest failures; with the address limit (20 a window by default) that
 * takes some 5,000 addresses.
 */
export const MAX_ROWS = 200_000;

/** Prune at most this often per process (ms of its clock)... */
export const PRUNE_EVERY_MS = 60_000;
/** ...or after this many attempts begun in the process, whichever comes first:
 * a flood adds at most twice as many rows per process before the next prune. */
export const PRUNE_EVERY_ATTEMPTS = 1_000;

/** The first key of pg_advisory_xact_lock(int, int) for login keys ("pkll"):
 * its own namespace beside the single-bigint locks (migrations). */
export const ADVISORY_LOCK_CLASS = 0x706b6c6c;

/** Retry-After when failures alone leave room and attempts in flight fill it, ms. */
const IN_FLIGHT_WAIT_MS = 1000;

type Scope = 'username' | 'address';

/** A login attempt holding a slot in both windows until it ends. */
export interface LoginAttempt {
  /** The password was wrong (or the user unknown): the slots stay, as failures. */
  failed(): Promise<void>;
  /** The login succeeded: its slots go back and the username's failures are cleared. */
  succeeded(): Promise<void>;
  /** The attempt ended before any password verdict (a bad client, an error):
   * its slots go back. A no-op once failed() or succeeded() was called. */
  abandon(): Promise<void>;
}

export interface LoginLimiterOptions {
  /** MAX_ROWS unless told otherwise (tests). */
  maxRows?: number;
  /** PRUNE_EVERY_ATTEMPTS unless told otherwise (tests). */
  pruneEveryAttempts?: number;
  /** Longest an attempt waits for its turn and its locks, ms (DATABASE_BUSY_TIMEOUT_MS); then busy. */
  lockWaitMs?: number;
}

export class LoginLimiter {
  readonly #maxRows: number;
  readonly #pruneEveryAttempts: number;
  /** The started_at of the max-th newest attempt of a key that still counts, if there are max. */
  readonly #nthNewest: CompiledOnce<{ started_at: number }>;
  /** The started_at of the max-th newest failure of a key in the window, if there are max. */
  readonly #nthNewestFailure: CompiledOnce<{ started_at: number }>;
  /** The check-and-take transactions, one at a time in this process. */
  readonly #turns: OneAtATime;
  readonly #insert: CompiledOnce<{ id: number }>;
  readonly #markFailed: CompiledOnce<unknown>;
  readonly #remove: CompiledOnce<unknown>;
  readonly #removeAndClear: CompiledOnce<unknown>;
  readonly #prune: string;
  #nextPruneAt = -Infinity;
  #attemptsSincePrune = 0;
  #lastId = 0;

  constructor(
    private readonly store: Store,
    private readonly limits: LoginLimits,
    private readonly clock: Clock,
    options: LoginLimiterOptions = {},
  ) {
    this.#maxRows = options.maxRows ?? MAX_ROWS;
    this.#pruneEveryAttempts = options.pruneEveryAttempts ?? PRUNE_EVERY_ATTEMPTS;
    this.#turns = new OneAtATime(
      clock,
      options.lockWaitMs ?? Number(DEFAULTS.DATABASE_BUSY_TIMEOUT_MS),
      'a login attempt',
    );
    const db = store.kysely;
    // Built with placeholder values in the order each run gives them (CompiledOnce).
    this.#nthNewest = new CompiledOnce(
      db
        .selectFrom('login_attempts')
        .select('started_at')
        .where('scope', '=', 'username')
        .where('key', '=', '')
        .where('started_at', '>', 0)
        .where((eb) => eb.or([eb('state', '=', 'failed'), eb('abandoned_at', '>', 0)]))
        .orderBy('started_at', 'desc')
        .limit(1)
        .offset(0),
    );
    this.#nthNewestFailure = new CompiledOnce(
      db
        .selectFrom('login_attempts')
        .select('started_at')
        .where('scope', '=', 'username')
        .where('key', '=', '')
        .where('started_at', '>', 0)
        .where('state', '=', 'failed')
        .orderBy('started_at', 'desc')
        .limit(1)
        .offset(0),
    );
    const row = { scope: 'username', key: '', started_at: 0, state: 'in_flight', abandoned_at: 0 } as const;
    this.#insert = new CompiledOnce(
      db
        .insertInto('login_attempts')
        .values([row, { ...row, scope: 'address' }])
        .returning('id'),
    );
    this.#markFailed = new CompiledOnce(
      db.updateTable('login_attempts').set({ state: 'failed' }).where('id', 'in', [0, 0]),
    );
    this.#remove = new CompiledOnce(db.deleteFrom('login_attempts').where('id', 'in', [0, 0]));
    this.#removeAndClear = new CompiledOnce(
      db
        .deleteFrom('login_attempts')
        .where((eb) =>
          eb.or([
            eb('id', 'in', [0, 0]),
            eb.and([
              eb('scope', '=', 'username'),
              eb('key', '=', ''),
              eb('state', '=', 'failed'),
              eb('started_at', '>', 0),
            ]),
          ]),
        ),
    );
    // Rows out of the window, and the oldest past the cap. On PostgreSQL the
    // prune skips rows another statement holds (an attempt ending), so it
    // never waits on one nor deadlocks with it; they go at the next prune.
    this.#prune =
      store.dialect === 'postgres'
        ? `DELETE FROM login_attempts WHERE id IN (SELECT id FROM login_attempts
             WHERE started_at <= $1 OR id <= $2 FOR UPDATE SKIP LOCKED)`
        : 'DELETE FROM login_attempts WHERE started_at <= ? OR id <= ?';
  }

  /** Seconds to wait (for Retry-After) when either limit is reached, else 0. */
  async retryAfterSeconds(username: string, address: string): Promise<number> {
    return this.#wait(this.store.kysely, normalize(username), address, this.clock.now());
  }

  /** Starts an attempt: either the seconds to wait (a limit is reached,
   * counting attempts in flight, in every process on the database) or the
   * attempt, holding a slot in both windows. Check and take are one
   * transaction, serialized per key, so concurrent requests cannot all pass
   * the check. Rejects with a busy error (isDatabaseBusy) when its turn or
   * its locks do not come within the lock wait. */
  async begin(username: string, address: string): Promise<{ retryAfterSeconds: number } | LoginAttempt> {
    const key = normalize(username);
    const now = this.clock.now();
    // The prune runs in the attempt's turn: attempts take their turns in the
    // order they began, and each one's wait bound counts from its begin.
    // The body awaits only its own queries (on SQLite it shares the API's
    // connection: nothing may interleave).
    const taken = await this.#turns.run(async (remainingMs) => {
      await this.#pruneNow(now);
      return this.store.kysely.transaction().execute(async (trx) => {
        if (this.store.dialect === 'postgres') {
          // For this transaction only; 0 would mean no bound at all.
          await trx.executeQuery(
            CompiledQuery.raw("SELECT set_config('lock_timeout', $1, true)", [`${Math.max(1, remainingMs)}ms`]),
          );
          for (const lock of loginLockKeys(key, address))
            await trx.executeQuery(
              CompiledQuery.raw('SELECT pg_advisory_xact_lock($1, $2)', [ADVISORY_LOCK_CLASS, lock]),
            );
        }
        const wait = await this.#wait(trx, key, address, now);
        if (wait > 0) return wait;
        const abandonedAt = now + MAX_LOGIN_MS;
        const rows = await this.#insert.run(trx, [
          ...['username', key, now, 'in_flight', abandonedAt],
          ...['address', address, now, 'in_flight', abandonedAt],
        ]);
        return rows.map((row) => row.id);
      });
    });
    if (typeof taken === 'number') return { retryAfterSeconds: taken };
    const ids = taken;
    this.#lastId = Math.max(this.#lastId, ...ids);
    this.#attemptsSincePrune += 1;
    let ended = false;
    const end = async (work: () => Promise<unknown>) => {
      if (ended) return;
      ended = true;
      await work();
    };
    return {
      failed: () => end(() => this.#markFailed.run(this.store.kysely, ['failed', ...ids])),
      succeeded: () =>
        end(() =>
          this.#removeAndClear.run(this.store.kysely, [
            ...ids,
            ...['username', key, 'failed', this.clock.now() - this.limits.windowMs],
          ]),
        ),
      abandon: () => end(() => this.#remove.run(this.store.kysely, ids)),
    };
  }

  /** Seconds (rounded up, for Retry-After) until both keys have room, 0 when they have room now. */
  async #wait(executor: Executor, key: string, address: string, now: number): Promise<number> {
    const ms = Math.max(
      await this.#waitMs(executor, 'username', key, this.limits.maxFailuresPerUsername, now),
      await this.#waitMs(executor, 'address', address, this.limits.maxFailuresPerAddress, now),
    );
    return Math.ceil(ms / 1000);
  }

  async #waitMs(executor: Executor, scope: Scope, key: string, max: number, now: number): Promise<number> {
    // Full when max attempts count: attempts in flight count as what they
    // may become, failures.
    const windowStart = now - this.limits.windowMs;
    const [nth] = await this.#nthNewest.run(executor, [scope, key, windowStart, 'failed', now, 1, max - 1]);
    if (nth === undefined) return 0;
    // The wait counts failures only: room comes when the max-th newest
    // failure leaves the window, or, with fewer failures, when an attempt in
    // flight ends without failing.
    const [failure] = await this.#nthNewestFailure.run(executor, [scope, key, windowStart, 'failed', 1, max - 1]);
    return failure === undefined ? IN_FLIGHT_WAIT_MS : Math.max(1, failure.started_at + this.limits.windowMs - now);
  }

  async #pruneNow(now: number): Promise<void> {
    if (now < this.#nextPruneAt && this.#attemptsSincePrune < this.#pruneEveryAttempts) return;
    this.#nextPruneAt = now + PRUNE_EVERY_MS;
    this.#attemptsSincePrune = 0;
    await this.store.kysely.executeQuery(
      CompiledQuery.raw(this.#prune, [now - this.limits.windowMs, this.#lastId - this.#maxRows]),
    );
  }
}

/** The second keys of the advisory locks on both keys (a username as
 * normalized), in the order to take them (ascending; one when both hash
 * alike). A collision of two keys only makes their attempts wait on each other. */
export function loginLockKeys(username: string, address: string): number[] {
  const keys = [hash32(`username:${username}`), hash32(`address:${address}`)].sort((a, b) => a - b);
  return keys[0] === keys[1] ? keys.slice(0, 1) : keys;
}

/** FNV-1a, 32 bits, as a signed int4. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash | 0;
}

function normalize(username: string): string {
  return username.trim().toLowerCase();
}
