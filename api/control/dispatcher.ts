// Delivers the queued control commands (control_commands) to their boxes
// over MQTT, in the API process beside the MQTT service:
// - per box in id order, one in flight per box (in this process by a set, across
//   processes by the row's in_flight_until, its lease, claimed in the same
//   write transaction that allocates the sequence by one conditional UPDATE:
//   of two dispatchers one wins; a dispatcher that dies mid-delivery leaves a
//   lease that passes, and then any takes the row again with a new sequence,
//   which the late one's writes (retryLater, settleSent) are conditional on);
// - sealed at send time under K_box with a fresh control sequence
//   (sequence.ts), so a retry never reuses one the box may have accepted;
// - when the box is seen online (its true availability says online: its
//   retained availability AND its gateway's, api/boxes/derived-availability.ts;
//   or any response of it arrives), else on a backoff on the injected clock;
//   a box behind a dead gateway is offline and gets nothing;
// - never to a box a conformance run holds (box_holds, holds.ts): the poll
//   and the kicks skip it, and the claim, which takes the sequence first
//   (the box's row written, so a run's reservation of its block and its hold
//   commit before or after it, never in between), gives up when a hold is
//   live; once the hold ends (or its lease passes) what is pending goes out
//   with sequences above the run's block;
// - never to a box an operator's reservation holds (box_reservations, a
//   held row not passed): the poll, the kicks and the claim skip it the
//   same way; once it is released or passes, what is pending goes out in
//   order (a release or an expiry in this process wakes the box's queue at
//   once, `wake`; another process's, at the next poll);
// - the answer is stored as a box log by ingestion, which settles the row
//   (settle.ts) in the same transaction; here only "no believable answer"
//   is handled: the row stays pending and is tried again later.
// The queue is polled every CONTROL_POLL_MS: rows an admin command wrote in
// another process are picked up without a restart, and whatever was pending
// when the API stopped goes out after it starts again.
import { FrameKind, commandAadTail, sealCommand } from '../../firmware-protocol/index.js';
import { backoffDelay, type BackoffPolicy } from '../../lib/backoff.js';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { Store } from '../db/store.js';
import type { EventPublisher } from '../events/types.js';
import type { CommandOutcome } from '../boxes/index.js';
import { scheduleDueDrops } from './operations.js';
import { BoxHolds } from './holds.js';
import { ControlCommandRepository, type ControlBody, type ControlCommandRow } from './repository.js';
import { ControlSequences } from './sequence.js';
import { settleUnechoed } from './settle.js';
import { messageOf } from '../../lib/message-of.js';

export type SendCommand = (moduleId: number, frame: Buffer, timeoutMs: number) => Promise<CommandOutcome>;

export interface ControlDispatcherOptions {
  /** The control queue, the boxes' control sequences and the rotations' drops (scheduleDueDrops). */
  readonly store: Store;
  readonly clock: Clock;
  readonly send: SendCommand;
  /** How long the box has to answer one send, ms (BOX_ANSWER_TIMEOUT_MS). */
  readonly answerTimeoutMs: number;
  /** How often the queue is read, ms (CONTROL_POLL_MS). */
  readonly pollMs: number;
  /** Retries of a command that got no answer. */
  readonly retry: BackoffPolicy;
  readonly logger?: Logger;
  /** The event stream: each delivery and what came of it, and the box whose pending commands changed. */
  readonly events?: Pick<EventPublisher, 'publishControl' | 'publishBox'>;
}

/** A send this dispatcher holds: its sequence, its sealed frame, and the
 * attempts before it (what the backoff after no answer counts). */
interface Claimed {
  seq: number;
  frame: Buffer;
  attemptsBefore: number;
}

export interface DispatcherCounters {
  sent: number;
  unanswered: number;
  /** Claims that failed (the database busy or away): each left to the next poll. */
  claimFailures: number;
}

export class ControlDispatcher {
  readonly counters: DispatcherCounters = { sent: 0, unanswered: 0, claimFailures: 0 };
  readonly #online = new Map<number, boolean>();
  readonly #inFlight = new Set<number>();
  #working = 0;
  readonly #commands: ControlCommandRepository;
  readonly #sequences: ControlSequences;
  readonly #holds: BoxHolds;
  readonly #logger: Logger;
  #timer: TimerHandle | undefined;
  #stopped = true;

  constructor(private readonly options: ControlDispatcherOptions) {
    this.#commands = new ControlCommandRepository(options.store);
    this.#sequences = new ControlSequences(options.store);
    this.#holds = new BoxHolds(options.store);
    this.#logger = (options.logger ?? silentLogger).child({ component: 'api:control' });
  }

  /** Deliveries under way in this process: sent, their answer not yet in
   * nor timed out. A test stepping a fake clock waits for these first. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Reads and writes of the queue under way (a poll, a claim, a retry's
   * write; not a box's answer awaited): a test stepping a fake clock waits
   * for none before the next step, so that the database's speed does not
   * decide what the clock sees. */
  get working(): number {
    return this.#working;
  }

  async #busy<T>(work: () => Promise<T>): Promise<T> {
    this.#working++;
    try {
      return await work();
    } finally {
      this.#working--;
    }
  }

  start(): void {
    this.#stopped = false;
    void this.tick();
  }

  /** Stops polling; a send under way is left to time out (its row stays pending). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The box's true availability (mqtt/box-availability.ts) changed, or
   * its own availability message arrived; online sends its head at once. */
  availability(moduleId: number, online: boolean): void {
    this.#online.set(moduleId, online);
    if (online) void this.#kick(moduleId, true);
  }

  /** Something that held the box's queue back may have ended (a
   * reservation released or passed): its head goes out now if it may. */
  wake(moduleId: number): void {
    void this.#kick(moduleId, false);
  }

  /** A response of the box arrived: it is online. Only news costs a read
   * (ingestion calls this for every response): a box already known online
   * is served by the poll and by the end of its previous delivery. */
  seen(moduleId: number): void {
    if (this.#online.get(moduleId) === true) return;
    this.#online.set(moduleId, true);
    void this.#kick(moduleId, true);
  }

  /** One pass over the queue (the poll; tests may call it). Never rejects. */
  async tick(): Promise<void> {
    if (this.#stopped) return;
    if (this.#timer !== undefined) this.options.clock.clearTimeout(this.#timer);
    this.#timer = this.options.clock.setTimeout(() => void this.tick(), this.options.pollMs);
    try {
      await this.#busy(async () => {
        for (const operation of await scheduleDueDrops(this.options.store, this.options.clock.now()))
          this.#logger.info({ operation }, 'rotation: dropping the previous issuer key from the boxes');
        for (const head of await this.#commands.pendingHeads(this.options.clock.now())) this.#consider(head, false);
      });
    } catch (error) {
      // A busy database (another process writing) or a closing one: the next poll tries again.
      this.#logger.warn({ err: messageOf(error) }, 'control queue not read');
    }
  }

  async #kick(moduleId: number, online: boolean): Promise<void> {
    if (this.#stopped || this.#inFlight.has(moduleId)) return;
    try {
      const head = await this.#busy(() => this.#commands.headOf(moduleId, this.options.clock.now()));
      if (head !== undefined) this.#consider(head, online);
    } catch (error) {
      this.#logger.warn({ module_id: moduleId, err: messageOf(error) }, 'control queue not read');
    }
  }

  /** Sends the head of a box's queue if it may go now. `justOnline`: the box
   * was just seen online, so a backoff is cut short. */
  #consider(head: ControlCommandRow, justOnline: boolean): void {
    const now = this.options.clock.now();
    if (this.#stopped || this.#inFlight.has(head.module_id) || this.#online.get(head.module_id) === false) return;
    if (head.in_flight_until !== null && head.in_flight_until > now) return; // another process waits for its answer
    if (!justOnline && head.next_attempt_at > now) return;
    this.#inFlight.add(head.module_id);
    let claimed = true;
    void this.#deliver(head, justOnline, () => (claimed = false)).finally(() => {
      this.#inFlight.delete(head.module_id);
      // The next command of the box, or a REPLAY's retry with its new sequence.
      // Not after a failed claim: the head is the same, and a database busy
      // or away would fail it again at once, a loop of failures and warnings
      // (on PostgreSQL a refused connection fails in a millisecond); the
      // next poll tries it again.
      if (claimed) void this.#kick(head.module_id, false);
    });
  }

  async #deliver(head: ControlCommandRow, justOnline: boolean, claimFailed: () => void): Promise<void> {
    const { clock, answerTimeoutMs } = this.options;
    let sent: Claimed | undefined;
    try {
      sent = await this.#busy(() => this.#claim(head, clock.now(), justOnline));
    } catch (error) {
      this.counters.claimFailures++;
      claimFailed();
      this.#logger.warn(
        { module_id: head.module_id, command: head.id, err: messageOf(error) },
        'control command not sent; tried again at the next poll',
      );
      return;
    }
    if (sent === undefined) return;
    this.counters.sent++;
    this.#tell(head, 'sent', null);
    const outcome = await this.options.send(head.module_id, sent.frame, answerTimeoutMs);
    if (this.#stopped) return;
    const problem = unanswered(outcome);
    if (problem === undefined) {
      // Verified: ingestion settled it with the box log, unless the box did
      // not echo the command (a version 1 box answers the new kinds
      // MALFORMED with kind and key_id 0, docs/protocol.md step 2).
      const { seq } = sent;
      await this.#busy(async () => {
        if ('answered' in outcome && outcome.answered.response !== null)
          await this.#settleUnechoed(head, seq, Buffer.from(outcome.answered.response, 'base64'));
        await this.#tellSettled(head);
      });
      return;
    }
    this.#tell(head, 'unanswered', null);
    this.counters.unanswered++;
    const delay = backoffDelay(this.options.retry, sent.attemptsBefore);
    this.#logger.info(
      { module_id: head.module_id, command: head.id, control_seq: sent.seq, problem, retry_ms: delay },
      'control command unanswered; tried again later',
    );
    try {
      const { seq } = sent;
      await this.#busy(() => this.#commands.retryLater(head.id, seq, problem, clock.now() + delay));
    } catch (error) {
      // Its in_flight_until passes: the next poll takes it again.
      this.#logger.warn(
        { module_id: head.module_id, command: head.id, err: messageOf(error) },
        'control command retry not stored',
      );
    }
  }

  /** The event stream hears of a delivery (api/events/). */
  #tell(head: ControlCommandRow, outcome: string, status: string | null): void {
    const { events, clock } = this.options;
    if (events === undefined) return;
    events.publishControl({
      module_id: head.module_id,
      operation_id: head.operation,
      kind: head.kind,
      outcome,
      status,
      at: new Date(clock.now()).toISOString(),
    });
    events.publishBox(head.module_id);
  }

  /** What the answer made of the command (settled by ingestion, or above): done, failed, or still pending. */
  async #tellSettled(head: ControlCommandRow): Promise<void> {
    if (this.options.events === undefined) return;
    let row: ControlCommandRow | undefined;
    try {
      row = await this.#commands.findById(head.id);
    } catch (error) {
      this.#logger.warn(
        { module_id: head.module_id, command: head.id, err: messageOf(error) },
        'control command not read',
      );
      return;
    }
    const outcome = row?.state === 'done' ? 'delivered' : row?.state === 'failed' ? 'failed' : 'answered';
    this.#tell(head, outcome, row?.last_status ?? null);
  }

  async #settleUnechoed(head: ControlCommandRow, seq: number, response: Buffer): Promise<void> {
    try {
      await settleUnechoed(this.options.store, head.id, seq, response, this.options.clock.now());
    } catch (error) {
      this.#logger.warn(
        { module_id: head.module_id, command: head.id, err: messageOf(error) },
        'control command not settled',
      );
    }
  }

  /** In one write transaction: a fresh sequence and the row marked in
   * flight; then the frame. Undefined when the row is no longer ours to send.
   * The body awaits only its own queries (no send, no timer). */
  async #claim(head: ControlCommandRow, now: number, justOnline: boolean): Promise<Claimed | undefined> {
    return this.options.store.kysely.transaction().execute(async (trx) => {
      const box = await trx
        .selectFrom('boxes')
        .select('box_key')
        .where('module_id', '=', head.module_id)
        .executeTakeFirst();
      if (box === undefined) return undefined;
      const current = await this.#commands.findById(head.id, trx);
      // `head` may be a read from before the last send's retryLater: this
      // row is what the claim decides on.
      if (current?.state !== 'pending' || (current.in_flight_until !== null && current.in_flight_until > now))
        return undefined;
      if (!justOnline && current.next_attempt_at > now) return undefined;
      const seq = await this.#sequences.next(head.module_id, trx);
      // After the sequence, which wrote the box's row: a conformance run's
      // hold committed before it is seen here (its spent sequence is a gap).
      if ((await this.#holds.liveHoldOf(head.module_id, now, trx)) !== undefined) return undefined;
      // Likewise a reservation taken before it (its take locks the box's row first).
      if (await this.#commands.reservedAt(head.module_id, now, trx)) return undefined;
      if (seq === undefined) {
        await this.#commands.settle(
          head.id,
          {
            state: 'failed',
            status: null,
            error: 'the box has used up its control sequences (u32)',
            nextAttemptAt: now,
            replays: current.replays,
          },
          now,
          trx,
        );
        return undefined;
      }
      // Conditional on the row still pending, out of flight and due: another
      // dispatcher that read it as free too gets false here (its sequence is
      // spent, a gap the box does not mind).
      const until = now + this.options.answerTimeoutMs;
      // Sealed before the claim, which keeps its nonce: only an answer to this very frame settles the row.
      const frame = sealControl(current, Buffer.from(box.box_key, 'hex'), seq);
      const sent = { controlSeq: seq, nonce: commandAadTail(frame) };
      if (!(await this.#commands.claim(head.id, sent, now, until, { evenIfBackingOff: justOnline }, trx)))
        return undefined;
      return { seq, frame, attemptsBefore: current.attempts };
    });
  }
}

/** Why an outcome is no (believable) answer; undefined for a verified one. */
function unanswered(outcome: CommandOutcome): string | undefined {
  if ('error' in outcome) return outcome.error === 'timeout' ? 'no answer in time' : 'no MQTT broker connected';
  const { answered } = outcome;
  if (answered.response === null) return `no response (${answered.error ?? 'the gateway had none'})`;
  if (answered.log?.verified !== true) return 'the answer did not verify under the box key';
  return undefined;
}

/** The frame of a queued command (docs/protocol.md, REVOKE and SET_ISSUER). */
export function sealControl(row: ControlCommandRow, boxKey: Buffer, seq: number): Buffer {
  const body = JSON.parse(row.body) as ControlBody;
  if (row.kind === 'REVOKE' && 'entries' in body) {
    return sealCommand({
      kind: FrameKind.REVOKE,
      key: boxKey,
      keyId: seq,
      scope: row.module_id,
      body: { entries: body.entries.map((entry) => ({ keyId: entry.key_id, until: entry.until })) },
    });
  }
  if (row.kind === 'SET_ISSUER' && 'issuer_key' in body) {
    const previous = body.issuer_key_previous;
    return sealCommand({
      kind: FrameKind.SET_ISSUER,
      key: boxKey,
      keyId: seq,
      scope: row.module_id,
      body: {
        issuerKey: Buffer.from(body.issuer_key, 'hex'),
        issuerKeyPrevious: previous === null ? null : Buffer.from(previous, 'hex'),
      },
    });
  }
  throw new Error(`control command ${row.id}: body does not fit kind ${row.kind}`);
}
