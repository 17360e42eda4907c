// What a verified response changes: the session of its smart key,
// whichever access kind (ACCESS or ACCESS_SIGNED) carried it
// (entering -> active at an entrance box, the end at an exit box, the tries
// countdown) and the control sequence of its box. Runs inside the ingestion
// transaction; an unverified log never gets here. The decision is made here
// over the rows the group read (BoxLogLookups: the key, the session read
// for update); the writes are the IngestStore's, each conditional (a state
// that is no longer the one read changes nothing).
import {
  Direction,
  REMAINING_NOT_APPLICABLE,
  Status,
  echoIsAuthenticated,
  isAccessKind,
  isControlKind,
  type ParsedResponse,
} from '../../firmware-protocol/index.js';
import type { Executor } from '../db/store.js';
import type { EventPublisher } from '../events/types.js';
import type { BoxRow } from '../boxes/index.js';
import type { BoxLogLookups, IngestStore } from './ingest-store.js';
import type { EndAtExit } from './session-end.js';

/** What the effects touch: the rows' store, the end of a session, the event stream. */
export interface EffectDeps {
  ingestStore: IngestStore;
  sessionEnd: EndAtExit;
  events: Pick<EventPublisher, 'publishSession'>;
}

/** A box's response whose tag verified, with its box and times: what it
 * changes is this file's business (firmware-protocol's Effect is what a box
 * does besides answering). */
export interface VerifiedResponse {
  box: BoxRow;
  response: ParsedResponse;
  /** Bytes 10..21 of the command answered, as logged (the nonce in the response's AAD). */
  commandNonce: Buffer;
  /** When the exchange happened (the log's created_at), ms. */
  happenedAt: number;
  receivedAt: number;
}

/** The session a verified access response may move: its key's, when the key
 * is of the box's parking and not revoked. undefined for anything else. */
export function sessionIdOf(
  rows: BoxLogLookups,
  { box, response }: Pick<VerifiedResponse, 'box' | 'response'>,
): number | undefined {
  if (!isAccessKind(response.kind) || !echoIsAuthenticated(response)) return undefined;
  const key = rows.smartKey(response.keyId);
  // A key minted by a test tool, a key of another parking, or a revoked key
  // (its logs are stored, but it moves its session no more): no session moves.
  if (!key || key.session_id === null || key.parking_id !== box.parking_id || key.revoked_at !== null) return undefined;
  return key.session_id;
}

/** Applies one verified response; the group's key and session rows are loaded already (ingest.ts). */
export async function applyVerifiedResponse(
  ctx: EffectDeps,
  on: Executor,
  verified: VerifiedResponse,
  rows: BoxLogLookups,
): Promise<void> {
  const { box, response, happenedAt, receivedAt } = verified;
  // docs/protocol.md, What an answer proves: an echo of a frame the box
  // refused before or at step 4 (a made-up tag, another scope) names a
  // kind and key_id that anyone may have written; it changes nothing.
  if (!echoIsAuthenticated(response)) return;
  if (isControlKind(response.kind)) {
    // Move next_control_seq past the sequence the box accepted (OK,
    // REVOCATION_FULL) or had passed already (REPLAY).
    await ctx.ingestStore.noteControlSequence(on, box.module_id, response.keyId, response.status !== Status.REPLAY);
    // A REVOKE or SET_ISSUER the service queued: done, failed or sent again,
    // when this is the answer to the very frame it sent.
    await ctx.ingestStore.settleControlAnswer(on, box.module_id, response, verified.commandNonce, receivedAt);
    return;
  }
  // ACCESS and ACCESS_SIGNED move sessions and tries alike (a signed
  // parking's keys carry the one, a sealed parking's the other); anything
  // else is a status report, or a command the box could not parse.
  const sessionId = sessionIdOf(rows, verified);
  if (sessionId === undefined) return;
  let session = rows.session(sessionId);
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
      await ctx.ingestStore.lowerTries(on, session.id, entrance, exit);
      ctx.events.publishSession(session.id);
      session = { ...session, entrance_remaining_tries: entrance, exit_remaining_tries: exit };
      rows.updated(session);
    }
  }
  if (response.status !== Status.OK) return;
  if (response.direction === Direction.ENTRANCE && session.state === 'entering') {
    if (await ctx.ingestStore.activate(on, session.id)) {
      ctx.events.publishSession(session.id);
      rows.updated({ ...session, state: 'active' });
    }
  } else if (
    response.direction === Direction.EXIT &&
    (session.state === 'entering' || session.state === 'active') &&
    session.ended_at === null
  ) {
    // The barrier opened to let the car out: the session ends when that
    // happened (clamped between its start and now), priced as finalize does.
    const endMs = Math.min(Math.max(happenedAt, session.start_time), receivedAt);
    const ended = await ctx.sessionEnd(on, session, endMs);
    if (ended) rows.updated(ended);
  }
}
