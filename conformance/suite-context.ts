// What every case of one run shares: the box, the link, the barrier watch,
// the control sequences and key ids handed out, the box clock learned from
// responses, and the record of every exchange for the checks over the whole
// run. Cases go through `CaseRun.send`, which checks one response against
// its expectation and records it. Version 2: the suite's own test issuers,
// whether it has touched the box's issuer keys (then they are put back when
// the run ends), and the revocations it added, so it knows how many of them
// are live on the box.
import type { Clock } from '../lib/clock.js';
import { sequenceAfterReplay } from '../lib/control-sequence-skip.js';
import {
  generateIssuerKeyPair,
  isControlKind,
  parseResponse,
  Status,
  verifyResponse,
  type ParsedResponse,
  type RevokeEntry,
} from '../firmware-protocol/index.js';
import type { BarrierWatch } from './barrier-watch.js';
import { batteryQuery, type BoxUnderTest } from './box-under-test.js';
import type { BoxTarget, Exchange } from './box-target.js';
import {
  describeStatus,
  echoProblems,
  expectedFields,
  statusByte,
  type Expectation,
  type ExpectedFields,
} from './expectations.js';
import { messageOf } from '../lib/message-of.js';
import { SuiteInterrupted, untilInterrupted } from './interrupted.js';

export interface SuiteSettings {
  /** Longest acceptable answer, ms (--answer-ms). */
  readonly answerMs: number;
  /** Longest wait for a barrier cycle, ms (--cycle-ms). */
  readonly cycleMs: number;
  /** The first control sequence (--control-seq); a REPLAY moves the run past the box's. */
  readonly controlSeq: number;
  /** Longest wait for the box's first answer before the cases, ms (--wait-ms);
   * without it the cases start at once. */
  readonly firstAnswerMs?: number;
  /** The first smart key id; each ACCESS case takes fresh ones. */
  readonly keyIdBase: number;
  /** The `until` of each entry the box holds that the suite did not add
   * (the service's revocations; U32_MAX: live all the run long), so the
   * revocation list's capacity counts them. */
  readonly heldRevocations?: readonly number[];
}

/** An issuer key pair the suite made for this run (docs/protocol.md, Keys): it
 * installs them with SET_ISSUER, so it can sign ACCESS_SIGNED frames. */
export interface TestIssuer {
  readonly privateKey: Buffer;
  readonly publicKey: Buffer;
}

/** The suite's two issuers: installed as issuer_key and issuer_key_previous. */
export interface SuiteIssuers {
  readonly current: TestIssuer;
  readonly previous: TestIssuer;
}

/** Two fresh issuers, for one run. */
export function freshIssuers(): SuiteIssuers {
  return { current: generateIssuerKeyPair(), previous: generateIssuerKeyPair() };
}

/** One exchange of the run, with what its case expected. */
export interface RecordedExchange {
  readonly caseName: string;
  readonly exchange: Exchange;
  readonly expected: ExpectedFields;
  /** Parsed fields, when the response parsed. */
  readonly fields: ParsedResponse | null;
}

/** What came back for one command, checked. */
export interface Checked {
  /** The response's fields when it parsed (check problems for its tag). */
  readonly fields: ParsedResponse | null;
  readonly exchange: Exchange;
}

export class SuiteContext {
  readonly exchanges: RecordedExchange[] = [];
  /** The suite's issuers: installed as issuer_key and issuer_key_previous. */
  readonly issuers: SuiteIssuers;
  /** Set once the suite has sent a SET_ISSUER (answered or not): the box's
   * own issuer keys must then be put back when the run ends. */
  issuerKeysTouched = false;
  /** The suite's entries on the box's revocation list, key_id -> until. */
  readonly #revoked = new Map<number, number>();
  #nextControlSeq: number;
  /** REPLAY answers the suite did not expect, so far. */
  #replays = 0;
  #nextKeyId: number;
  /** The last verified box_time and when (local clock, ms) it arrived. */
  #boxTime: { seconds: number; at: number } | undefined;

  constructor(
    readonly box: BoxUnderTest,
    readonly target: BoxTarget,
    readonly barrier: BarrierWatch,
    readonly clock: Clock,
    readonly settings: SuiteSettings,
    /** Interrupts the run: no case starts, the wait under way ends at once. */
    readonly signal?: AbortSignal,
    /** Ends the wait for the put-back of the issuer keys (sent even when
     * the run was interrupted); without it, that wait runs its course. */
    readonly putBackSignal?: AbortSignal,
    issuers: SuiteIssuers = freshIssuers(),
  ) {
    this.issuers = issuers;
    this.#nextControlSeq = settings.controlSeq;
    this.#nextKeyId = settings.keyIdBase;
  }

  /** The next control sequence, one up from the last (docs/protocol.md, step 6). */
  controlSeq(): number {
    return this.#nextControlSeq++;
  }

  /** After a REPLAY of `refused` the suite did not expect: the box had
   * accepted that sequence or a later one (an earlier run, the service), so
   * the run goes on past it, as the service does (lib/control-sequence-skip.ts).
   * Returns how many such REPLAYs the run has had. */
  skipPastReplay(refused: number): number {
    this.#replays++;
    this.#nextControlSeq = Math.max(
      this.#nextControlSeq,
      sequenceAfterReplay(refused, this.#replays, this.clock.now()),
    );
    return this.#replays;
  }

  /** The sequence the next control command will carry (none is taken). */
  get nextControlSeq(): number {
    return this.#nextControlSeq;
  }

  /** A verified answer tells the box's clock and barrier. */
  heard(fields: ParsedResponse): void {
    this.#boxTime = { seconds: fields.boxTime, at: this.clock.now() };
    this.barrier.add({ barrier: fields.barrier, at: this.clock.now(), source: 'response' });
  }

  /** A smart key id no other case of this run uses, so tries do not mix (step 9). */
  keyId(): number {
    const id = this.#nextKeyId;
    this.#nextKeyId = this.#nextKeyId >= 0xffffffff ? 1 : this.#nextKeyId + 1;
    return id;
  }

  /** The box accepted these REVOKE entries (docs/protocol.md, step 6): an
   * id already listed keeps the later until. */
  revoked(entries: readonly RevokeEntry[]): void {
    for (const { keyId, until } of entries) this.#revoked.set(keyId, Math.max(until, this.#revoked.get(keyId) ?? 0));
  }

  /** The suite's entries still live at `boxTime` (until + skew >= box_time,
   * step 8a); the box forgets the others at its next REVOKE. */
  liveRevocations(boxTime: number): number {
    let live = 0;
    for (const until of this.#revoked.values()) if (until + this.box.skewSeconds >= boxTime) live++;
    return live;
  }

  /** Entries the box held before the run (settings.heldRevocations) still live at `boxTime`. */
  heldLiveRevocations(boxTime: number): number {
    let live = 0;
    for (const until of this.settings.heldRevocations ?? []) if (until + this.box.skewSeconds >= boxTime) live++;
    return live;
  }

  get interrupted(): boolean {
    return this.signal?.aborted === true;
  }

  /** How long to wait for an answer before calling it a timeout: an answer
   * slower than --answer-ms still arrives, and fails the timing check. */
  get waitMs(): number {
    return this.settings.answerMs + Math.max(this.settings.answerMs, 1_000);
  }

  /** The box's clock now, in whole seconds, from the last box_time seen. */
  boxTimeNow(): number | undefined {
    const learned = this.#boxTime;
    if (learned === undefined) return undefined;
    return learned.seconds + Math.floor((this.clock.now() - learned.at) / 1000);
  }

  /** The box clock, learned afresh (a BATTERY_QUERY) unless a response of
   * the last few seconds told it. Undefined when the box did not answer. */
  async learnBoxTime(run: CaseRun): Promise<number | undefined> {
    const learned = this.#boxTime;
    if (learned !== undefined && this.clock.now() - learned.at < 5_000) return this.boxTimeNow();
    // A probe, not one of the case's own answers: recorded for the checks
    // over the run, but only its problems show in the case.
    const { problems } = await this.exchange(run.caseName, batteryQuery(this.box, this.controlSeq()), {
      status: Status.OK,
    });
    for (const problem of problems) run.fail(`clock probe (BATTERY_QUERY): ${problem}`);
    return this.boxTimeNow();
  }

  /** Sends, records and checks one command; the case's got and problems
   * grow. Rejects with SuiteInterrupted, recording nothing, when the run is
   * interrupted before the answer (`evenIfInterrupted`, the put-back: when
   * putBackSignal gives up on it). */
  async exchange(
    caseName: string,
    command: Buffer,
    expectation: Expectation,
    options: { evenIfInterrupted?: boolean } = {},
  ): Promise<{ checked: Checked; got: string; problems: string[] }> {
    const evenIfInterrupted = options.evenIfInterrupted === true;
    if (this.interrupted && !evenIfInterrupted) throw new SuiteInterrupted();
    const exchange = await untilInterrupted(
      this.target.exchange(command, this.waitMs),
      evenIfInterrupted ? this.putBackSignal : this.signal,
    );
    const expected = expectedFields(this.box, command, expectation);
    if (exchange.response === null) {
      this.exchanges.push({ caseName, exchange, expected, fields: null });
      return {
        checked: { fields: null, exchange },
        got: exchange.error ?? 'timeout',
        problems: [`no answer (${exchange.error ?? 'timeout'} after ${exchange.elapsedMs} ms)`],
      };
    }
    let fields: ParsedResponse;
    try {
      fields = parseResponse(exchange.response);
    } catch (error) {
      this.exchanges.push({ caseName, exchange, expected, fields: null });
      return {
        checked: { fields: null, exchange },
        got: 'unreadable',
        problems: [`response does not parse: ${messageOf(error)}`],
      };
    }
    this.exchanges.push({ caseName, exchange, expected, fields });
    const problems: string[] = [];
    const verified = verifyResponse(exchange.response, this.box.boxKey, command);
    if (verified) this.heard(fields);
    else problems.push('response tag does not verify for this command');
    if (fields.status !== expected.status)
      problems.push(`status ${describeStatus(fields.status)}, expected ${describeStatus(expected.status)}`);
    // An authenticated REPLAY (docs/protocol.md, What an answer proves) the case did not ask for.
    if (
      verified &&
      fields.status === Status.REPLAY &&
      expected.status !== Status.REPLAY &&
      isControlKind(fields.kind)
    ) {
      this.skipPastReplay(fields.keyId);
      problems.push(
        `the box had accepted control sequence ${fields.keyId} or a later one (another sender, or an earlier run): the run goes on from ${this.#nextControlSeq}`,
      );
    }
    problems.push(...echoProblems(expected, fields));
    return { checked: { fields, exchange }, got: statusByte(fields.status), problems };
  }
}

/** One case being run: its exchanges' statuses and its problems. */
export class CaseRun {
  readonly got: string[] = [];
  readonly problems: string[] = [];
  /** Why the case did not run, when it could not (a target that cannot restart a box). */
  skipped: string | undefined;

  constructor(
    readonly context: SuiteContext,
    readonly caseName: string,
  ) {}

  get box(): BoxUnderTest {
    return this.context.box;
  }

  async send(
    command: Buffer,
    expectation: Expectation,
    options: { evenIfInterrupted?: boolean } = {},
  ): Promise<Checked> {
    const { checked, got, problems } = await this.context.exchange(this.caseName, command, expectation, options);
    this.got.push(got);
    this.problems.push(...problems);
    return checked;
  }

  /** Adds a note to what the case got (e.g. how long the barrier took). */
  note(text: string): void {
    this.got.push(text);
  }

  fail(problem: string): void {
    this.problems.push(problem);
  }

  skip(reason: string): void {
    this.skipped = reason;
  }
}
