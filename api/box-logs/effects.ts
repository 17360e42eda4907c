// What a verified response changes (issue 5): the session of its smart key,
// whichever access kind (ACCESS or ACCESS_SIGNED) carried it
// (entering -> active at an entrance box, the end at an exit box, the tries
// countdown) and the control sequence of its box. Runs inside the ingestion
// transaction; an unverified log never gets here.
import {
  Direction,
  REMAINING_NOT_APPLICABLE,
  Status,
  isAccessKind,
  isControlKind,
  type ParsedResponse,
} from '../../firmware-protocol/index.js';
import type { Db } from '../db/open.js';
import type { BoxesSqlite, BoxRow } from '../repositories/boxes.js';
import type { SessionRepository, SessionRow } from '../repositories/sessions.js';
import type { SmartKeyRepository, SmartKeyRow } from '../repositories/smart-keys.js';
import { endSession } from '../sessions/service.js';
import { settleControlAnswer } from '../control/settle.js';

/** What the effects touch: the key and session read, the tries and states
 * written, the box's control sequence, the control command settled (in the
 * same transaction), and what ending a session needs (the session service's
 * own dependencies). */
export type EffectDeps = Parameters<typeof endSession>[0] & {
  db: Db;
  smartKeys: Pick<SmartKeyRepository, 'findById'>;
  sessions: Pick<SessionRepository, 'findById' | 'setTries' | 'setState'>;
  boxesSqlite: Pick<BoxesSqlite, 'noteControlSequence'>;
};

/** Rows read within one batch (50 tries of one key: one read each), kept
 * up to date by the writes below. */
export class BatchRows {
  private readonly keys = new Map<number, SmartKeyRow | undefined>();
  private readonly sessions = new Map<number, SessionRow | undefined>();

  constructor(private readonly ctx: Pick<EffectDeps, 'smartKeys' | 'sessions'>) {}

  key(id: number): SmartKeyRow | undefined {
    if (!this.keys.has(id)) this.keys.set(id, this.ctx.smartKeys.findById(id));
    return this.keys.get(id);
  }

  session(id: number): SessionRow | undefined {
    if (!this.sessions.has(id)) this.sessions.set(id, this.ctx.sessions.findById(id));
    return this.sessions.get(id);
  }

  updated(session: SessionRow): void {
    this.sessions.set(session.id, session);
  }
}

/** A box's response whose tag verified, with its box and times: what it
 * changes is this file's business (firmware-protocol's Effect is what a box
 * does besides answering). */
export interface VerifiedResponse {
  box: BoxRow;
  response: ParsedResponse;
  /** When the exchange happened (the log's created_at), ms. */
  happenedAt: number;
  receivedAt: number;
}

export function applyVerifiedResponse(
  ctx: EffectDeps,
  { box, response, happenedAt, receivedAt }: VerifiedResponse,
  rows: BatchRows = new BatchRows(ctx),
): void {
  if (isControlKind(response.kind)) {
    // docs/protocol.md, after step 11: move next_control_seq past any echoed control sequence.
    ctx.boxesSqlite.noteControlSequence(box.module_id, response.keyId, response.status === Status.OK);
    // A REVOKE or SET_ISSUER the service queued: done, failed or sent again.
    settleControlAnswer(ctx.db, box.module_id, response, receivedAt);
    return;
  }
  // ACCESS and ACCESS_SIGNED move sessions and tries alike (a signed
  // parking's keys carry the one, a sealed parking's the other); anything
  // else is a status report, or a command the box could not parse.
  if (!isAccessKind(response.kind)) return;
  const key = rows.key(response.keyId);
  // A key minted by a test tool, a key of another parking, or a revoked key
  // (its logs are stored, but it moves its session no more): no session moves.
  if (!key || key.session_id === null || key.parking_id !== box.parking_id || key.revoked_at !== null) return;
  let session = rows.session(key.session_id);
  if (!session) return;

  // Tries: the box reports, once the frame opened and its body was whole, how
  // many tries this key has left in its direction; the session keeps the lowest.
  if (response.remaining !== REMAINING_NOT_APPLICABLE) {
    const entrance =
      response.direction === Direction.ENTRANCE
        ? Math.min(session.entrance_remaining_tries, response.remaining)
        : session.entrance_remaining_tries;
    const exit =
      response.direction === Direction.EXIT
        ? Math.min(session.exit_remaining_tries, response.remaining)
        : session.exit_remaining_tries;
    if (entrance !== session.entrance_remaining_tries || exit !== session.exit_remaining_tries) {
      ctx.sessions.setTries(session.id, entrance, exit);
      ctx.events.publishSession(session.id);
      session = { ...session, entrance_remaining_tries: entrance, exit_remaining_tries: exit };
      rows.updated(session);
    }
  }
  if (response.status !== Status.OK) return;
  if (response.direction === Direction.ENTRANCE && session.state === 'entering') {
    ctx.sessions.setState(session.id, 'active');
    ctx.events.publishSession(session.id);
    rows.updated({ ...session, state: 'active' });
  } else if (
    response.direction === Direction.EXIT &&
    (session.state === 'entering' || session.state === 'active') &&
    session.ended_at === null
  ) {
    // The barrier opened to let the car out: the session ends when that
    // happened (clamped between its start and now), priced as finalize does.
    const endMs = Math.min(Math.max(happenedAt, session.start_time), receivedAt);
    rows.updated(endSession(ctx, session, endMs, false).session);
  }
}
