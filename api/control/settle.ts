// A box's verified answer to a control command the service sent (a
// REVOKE or SET_ISSUER of control_commands, found by its sequence): runs in
// the ingestion transaction that stores the box log, in whichever process
// ingests it, so "done" and its effect (a parking switching keys) commit
// together with the answer or not at all.
import { FrameKind, Status, parseResponse, statusName, type ParsedResponse } from '../../firmware-protocol/index.js';
import type { RowLocks } from '../db/row-locks.js';
import type { Executor, Store } from '../db/store.js';
import { ControlCommandRepository, type ControlBody, type ControlCommandRow, type ControlKind } from './repository.js';
import { applyIssuerStep } from './completion.js';
import { MAX_REPLAYS, sequenceAfterReplay } from '../../lib/control-sequence-skip.js';
import { ControlSequences } from './sequence.js';

function kindOf(kind: number): ControlKind | undefined {
  if (kind === FrameKind.REVOKE) return 'REVOKE';
  if (kind === FrameKind.SET_ISSUER) return 'SET_ISSUER';
  return undefined;
}

/** Settles the pending command a box's verified answer is for, if the
 * service sent it, on `on` (the ingestion's transaction), on both engines:
 * the command's state, a REPLAY's skip of the box's sequence, and the
 * operation's completion once its last command is done. */
export class ControlAnswers {
  readonly #commands: ControlCommandRepository;
  readonly #sequences: ControlSequences;
  readonly #locks: RowLocks;

  constructor(store: Store) {
    this.#locks = store;
    this.#commands = new ControlCommandRepository(store);
    this.#sequences = new ControlSequences(store);
  }

  /** `commandNonce`: bytes 10..21 of the command the answer is bound to
   * (its AAD); the caller passes only answers whose echo is authenticated
   * (docs/protocol.md, What an answer proves). */
  async settle(
    on: Executor,
    moduleId: number,
    response: ParsedResponse,
    commandNonce: Buffer,
    nowMs: number,
  ): Promise<void> {
    const kind = kindOf(response.kind);
    if (kind === undefined) return;
    // Built per call: a control answer is rare (not the box-log hot path).
    const command = await on
      .selectFrom('control_commands')
      .selectAll()
      .where('module_id', '=', moduleId)
      .where('control_seq', '=', response.keyId)
      .where('kind', '=', kind)
      .where('state', '=', 'pending')
      .where('sent_nonce', '=', commandNonce.toString('hex'))
      .executeTakeFirst();
    // Another tool's command (the same sequence, another frame), or settled already.
    if (command === undefined) return;
    const status = statusName(response.status) ?? `0x${response.status.toString(16).padStart(2, '0')}`;
    const outcome = outcomeOf(command, response.status, status, nowMs);
    if (outcome.skipTo !== undefined) await this.#sequences.skipTo(moduleId, outcome.skipTo, on);
    await this.#commands.settle(command.id, outcome, nowMs, on);
    if (outcome.state !== 'done') return;
    await completeOperationOn(on, this.#locks, command);
  }
}

/** What an operation does once its last delivery is done (or skipped), on the caller's
 * transaction: a REVOKE's has nothing more to do (the key was refused in
 * the service at once); a SET_ISSUER's moves the parking's issuer keys.
 * Two boxes' last answers ingested at once (two transactions of one
 * process, or two processes) would each see the other's command still
 * pending under PostgreSQL's READ COMMITTED, and neither would take the
 * step: the parking's row is locked first, so the second reads after the
 * first committed. SQLite runs one write transaction at a time. */
export async function completeOperationOn(on: Executor, locks: RowLocks, settled: ControlCommandRow): Promise<void> {
  const body = JSON.parse(settled.body) as ControlBody;
  if (!('issuer_key' in body)) return;
  await locks.takeRowLocks(on.selectFrom('secured_parkings').select('id').where('id', '=', settled.parking_id));
  const states = await on
    .selectFrom('control_commands')
    .select('state')
    .where('operation', '=', settled.operation)
    .execute();
  // A delivery an operator skipped counts as taken: the operation goes on without it.
  if (states.some((command) => command.state !== 'done' && command.state !== 'skipped')) return;
  await applyIssuerStep(on, settled.purpose, settled.parking_id, body.issuer_key);
}

interface Outcome {
  state: 'pending' | 'done' | 'failed';
  status: string;
  error: string | null;
  nextAttemptAt: number;
  replays: number;
  skipTo?: number;
}

function outcomeOf(command: ControlCommandRow, code: number, status: string, nowMs: number): Outcome {
  const base = { status, nextAttemptAt: command.next_attempt_at, replays: command.replays };
  switch (code) {
    case Status.OK:
      return { ...base, state: 'done', error: null };
    case Status.REPLAY: {
      // The box accepted a higher sequence from another tool: skip ahead and
      // send again at once, a bounded number of times.
      const replays = command.replays + 1;
      if (replays > MAX_REPLAYS)
        return {
          ...base,
          replays,
          state: 'failed',
          error: `REPLAY ${replays} times: the box keeps refusing the sequence`,
        };
      return {
        ...base,
        replays,
        state: 'pending',
        error: 'REPLAY: sequence skipped ahead',
        nextAttemptAt: nowMs,
        skipTo: sequenceAfterReplay(command.control_seq ?? 0, replays, nowMs),
      };
    }
    case Status.REVOCATION_FULL:
      // Not retried blindly: the list frees up only as entries expire.
      return {
        ...base,
        state: 'failed',
        error: "REVOCATION_FULL: the box's revocation list is full; nothing changed on the box",
      };
    default:
      return { ...base, state: 'failed', error: `${status}: the box refused the command` };
  }
}

/**
 * A verified answer to the send with `seq` that settled nothing: the box did
 * not echo the command's kind and sequence (steps 1 and 2 failed: a version
 * 1 box does not know REVOKE or SET_ISSUER and answers MALFORMED with kind
 * and key_id 0). Sending it again would get the same: failed, with the
 * status it gave.
 */
export async function settleUnechoed(
  store: Store,
  commandId: number,
  seq: number,
  response: Buffer,
  nowMs: number,
): Promise<void> {
  const commands = new ControlCommandRepository(store);
  const command = await commands.findById(commandId);
  if (command?.state !== 'pending' || command.control_seq !== seq || command.in_flight_until === null) return;
  const code = parseResponse(response).status;
  const status = statusName(code) ?? `0x${code.toString(16).padStart(2, '0')}`;
  const error = `${status}: the box did not recognise the command (version 1 firmware does not know ${command.kind})`;
  // Conditional on the send still in flight: a later send (another
  // dispatcher) or an answer that settled it meanwhile is left alone.
  await commands.settleSent(
    command.id,
    seq,
    { state: 'failed', status, error, nextAttemptAt: command.next_attempt_at, replays: command.replays },
    nowMs,
  );
}
