// MQTT ingestion: a response message on
// `parkbench/boxes/{module_id}/response` becomes a box log through the same
// path as POST /api/box_logs (ingestBoxLogs: same verification of the tag,
// same session effects, same deduplication of verified logs, same
// forwarding), and through the same group commit (api/db/group-commit.ts):
// each message is an input of one shared work, so the messages of one
// event-loop turn become box logs in ONE ingestBoxLogs call (their boxes,
// parkings and keys read once, each box's responses verified together, one
// observation per box), in the transaction the HTTP batches of that turn
// share. A message is settled (the broker sends its PUBACK) only after that
// commit. If that call fails, the group commit runs each message again alone
// in a savepoint of its own: the one that fails is lost alone, its
// neighbours are stored once. The control command a verified answer settles
// (api/control/) is settled inside ingestBoxLogs, in the same transaction.
//
// A message that cannot become a log at all (not a response message by
// lib/mqtt-messages.ts, a received_at off its format, an unknown box, ids
// ingestBoxLogs refuses) is counted by reason, logged, and acknowledged: it
// never stops ingestion. A message that meets a database locked by another
// process past busy_timeout is no such message: nothing of it is written, it
// stays unacknowledged, and it is tried again BUSY_RETRY_MS later on the
// injected clock (the broker redelivers it if this process dies).
import { createHash } from 'node:crypto';
import {
  isAccessKind,
  isControlKind,
  parseCommandHeader,
  renderCommand,
  renderResponse,
} from '../../firmware-protocol/index.js';
import { sleep, type Clock } from '../../lib/clock.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import {
  MessageError,
  parseResponseMessage,
  type CommandContext,
  type ReceivedResponseMessage,
} from '../../lib/mqtt-messages.js';
import {
  type BoxLogIngestDeps,
  type BoxLogInput,
  BoxLogLookups,
  BoxLogRefusal,
  type BoxLogResult,
  ingestBoxLogs,
} from '../box-logs/index.js';
import { isDatabaseBusy } from '../db/busy.js';
import type { GroupCommit, SharedWork } from '../db/group-commit.js';
import type { Executor } from '../db/store.js';
import type { BoxRow } from '../boxes/index.js';
import { FIRST_YEAR, LAST_YEAR, parseIsoTime, sqlTime } from '../http/time.js';

type RefusalReason =
  | 'not_json'
  | 'no_command'
  | 'bad_received_at'
  | 'bad_field'
  | 'bad_topic'
  | 'unknown_box'
  | 'refused_by_api'
  | 'failed';

export interface IngestionCounters {
  /** Box logs stored (verified or not). */
  stored: number;
  /** Verified responses already stored (a redelivery). */
  duplicates: number;
  /** Messages that could not become a box log, by reason. */
  refused: Record<RefusalReason, number>;
  /** Messages put off because the database was busy (each time). */
  busy: number;
}

/** How long a message that met a busy database waits before it is tried again. */
export const BUSY_RETRY_MS = 1_000;

/** A response message as it arrived, for whoever waits on its request_id. */
export interface IngestedResponse {
  readonly moduleId: number;
  readonly response: string | null;
  readonly error: string | undefined;
  readonly context: CommandContext;
  readonly log: BoxLogResult | undefined;
}

/** What ingestion uses: the box-log path's dependencies, its clock (for
 * received_at and the busy retry) and the group commit (flushed at close).
 * AppContext has them. */
export type ResponseIngestionDeps = BoxLogIngestDeps & {
  clock: Clock;
  groupCommit: Pick<GroupCommit, 'runShared' | 'flush'>;
};

/** A message waiting for its turn's group, parsed on arrival (or why not). */
interface Received {
  readonly moduleId: number;
  readonly payload: Buffer;
  readonly parsed: ReceivedResponseMessage | MessageError;
}

/** Hears of each message as it arrives, parsed (undefined: it does not parse). */
export type ArrivalListener = (moduleId: number, payload: Buffer, message: ReceivedResponseMessage | undefined) => void;

/** What became of a message in its group. */
type Taken =
  | { readonly kind: 'unparsed'; readonly reason: RefusalReason; readonly detail: string }
  | { readonly kind: 'unknown_box' }
  | { readonly kind: 'stored'; readonly response: IngestedResponse }
  | { readonly kind: 'refused'; readonly response: IngestedResponse; readonly refusal: BoxLogRefusal };

/** The parse error's field -> the reason a message is counted under. */
function reasonOf(error: MessageError): RefusalReason {
  if (error.field === undefined) return 'not_json';
  if (error.field === 'command') return 'no_command';
  if (error.field === 'received_at') return 'bad_received_at';
  return 'bad_field';
}

export class ResponseIngestion {
  readonly counters: IngestionCounters = {
    stored: 0,
    duplicates: 0,
    refused: {
      not_json: 0,
      no_command: 0,
      bad_received_at: 0,
      bad_field: 0,
      bad_topic: 0,
      unknown_box: 0,
      refused_by_api: 0,
      failed: 0,
    },
    busy: 0,
  };
  readonly #logger: Logger;
  readonly #listeners = new Set<(response: IngestedResponse) => void>();
  #arrivals: ArrivalListener | undefined;
  /** The messages of one group, stored by one call (#storeAll). */
  readonly #shared: SharedWork<Received, Taken> = { runAll: (on, received) => this.#storeAll(on, received) };

  constructor(
    private readonly ctx: ResponseIngestionDeps,
    logger: Logger = silentLogger,
  ) {
    this.#logger = logger.child({ component: 'api:ingestion' });
  }

  /** Called with every response message taken (stored or refused by ingestBoxLogs). */
  onResponse(listener: (response: IngestedResponse) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Called with each message as it arrives, before it is stored (the
   * capture ring, api/capture/): the one parse serves both. */
  onArrival(listener: ArrivalListener): void {
    this.#arrivals = listener;
  }

  /** Ingests one message as a unit of the group commit; resolves once its
   * box log is committed (or it is refused for good), trying again while the
   * database is busy. Never rejects. */
  async ingest(moduleId: number, payload: Buffer): Promise<void> {
    const received: Received = { moduleId, payload, parsed: parsedOf(payload) };
    this.#arrivals?.(moduleId, payload, received.parsed instanceof MessageError ? undefined : received.parsed);
    for (;;) {
      try {
        const taken = await this.ctx.groupCommit.runShared(this.#shared, received);
        if (taken.kind === 'unparsed') this.#refuse(taken.reason, moduleId, taken.detail);
        else if (taken.kind === 'unknown_box')
          this.#refuse('unknown_box', moduleId, `no box with module id ${moduleId}`);
        else if (taken.kind === 'refused') {
          this.#refuse('refused_by_api', moduleId, taken.refusal.message);
          this.#settled(taken.response);
        } else this.#settled(taken.response);
        return;
      } catch (error) {
        if (isDatabaseBusy(error)) {
          this.counters.busy++;
          this.#logger.warn(
            { module_id: moduleId, retry_ms: BUSY_RETRY_MS, err: messageOf(error) },
            'database busy: response kept unacknowledged, tried again later',
          );
          await sleep(this.ctx.clock, BUSY_RETRY_MS);
          continue;
        }
        this.counters.refused.failed++;
        this.#logger.error({ module_id: moduleId, err: messageOf(error) }, 'response could not be ingested');
        return;
      }
    }
  }

  /**
   * The messages of one group as box logs, in one ingestBoxLogs call: rows
   * read once for all (the same lookups build the logs and check them), the
   * responses of a box verified together. Runs in the group's transaction.
   * Parsed on arrival, judged here: a message is counted, whatever becomes
   * of it, in the order messages arrived (one refused at once would be
   * counted before the messages ahead of it are committed).
   * Alone, a refusal is this message's (counted, acknowledged); among others
   * it is thrown, and the group commit runs each message alone to find it.
   */
  async #storeAll(on: Executor, received: readonly Received[]): Promise<Taken[]> {
    const lookups = new BoxLogLookups(this.ctx.ingestStore);
    const now = this.ctx.clock.now();
    const parsed = received.map(
      ({
        moduleId,
        payload,
        parsed: message,
      }): Taken | { moduleId: number; message: ReceivedResponseMessage; createdAt: string; digest: string } => {
        if (message instanceof MessageError)
          return { kind: 'unparsed', reason: reasonOf(message), detail: message.message };
        const createdAt = createdAtOf(message.received_at, now);
        if (createdAt === undefined) {
          return {
            kind: 'unparsed',
            reason: 'bad_received_at',
            detail: `received_at ${JSON.stringify(message.received_at).slice(0, 60)} is not ISO 8601 with an offset in years ${FIRST_YEAR}..${LAST_YEAR}`,
          };
        }
        return { moduleId, message, createdAt, digest: messageDigestOf(moduleId, payload) };
      },
    );
    // The rows of the whole group, one query a table: the boxes and the ids
    // the messages name, then the boxes' parkings.
    const messages = parsed.filter((one) => 'message' in one);
    await lookups.load(on, {
      boxes: messages.map((one) => one.moduleId),
      smartKeys: messages.flatMap(({ message }) => keyIdsOf(message)),
      users: messages.flatMap(({ message }) =>
        message.context.fo_user_id === undefined ? [] : [message.context.fo_user_id],
      ),
    });
    await lookups.load(on, { parkings: messages.flatMap((one) => lookups.box(one.moduleId)?.parking_id ?? []) });
    const prepared = parsed.map((one): Taken | { response: IngestedResponse; entry: BoxLogInput } => {
      if (!('message' in one)) return one;
      const { moduleId, message, createdAt, digest } = one;
      const box = lookups.box(moduleId);
      if (box === undefined) return { kind: 'unknown_box' };
      const response: IngestedResponse = {
        moduleId,
        response: message.response,
        error: message.error,
        context: message.context,
        log: undefined,
      };
      return { response, entry: this.#entry(lookups, box, message, createdAt, digest) };
    });
    const storing = prepared.filter((one) => 'entry' in one);
    let logs: BoxLogResult[] = [];
    try {
      if (storing.length > 0)
        logs = await ingestBoxLogs(
          this.ctx,
          on,
          storing.map((one) => one.entry),
          { source: 'mqtt' },
          lookups,
        );
    } catch (error) {
      const [only] = storing;
      if (received.length === 1 && only !== undefined && error instanceof BoxLogRefusal)
        return [{ kind: 'refused', response: only.response, refusal: error }];
      throw error;
    }
    let next = 0;
    return prepared.map((one): Taken =>
      'entry' in one ? { kind: 'stored', response: { ...one.response, log: logs[next++] } } : one,
    );
  }

  /** Counts a committed (or refused) log and tells whoever waits for it. */
  #settled(response: IngestedResponse): void {
    if (response.log?.duplicate === true) this.counters.duplicates++;
    else if (response.log !== undefined) this.counters.stored++;
    for (const listener of this.#listeners) listener(response);
  }

  /** The box log of a response: ids from the message's context when the
   * sender gave ones that fit the box's parking, else from the command itself
   * (key_id -> smart key -> driver). */
  #entry(
    lookups: BoxLogLookups,
    box: BoxRow,
    message: ReceivedResponseMessage,
    createdAt: string,
    digest: string,
  ): BoxLogInput {
    const { command, response, context } = message;
    const commandBytes = Buffer.from(command, 'base64');
    const header = parseCommandHeader(commandBytes);
    const control = header.ok && isControlKind(header.header.kind);
    const keyFromContext = context.smart_key_id === undefined ? undefined : lookups.smartKey(context.smart_key_id);
    // An access command's key_id is a smart key id, whichever kind carries it.
    const keyFromCommand =
      header.ok && isAccessKind(header.header.kind) ? lookups.smartKey(header.header.keyId) : undefined;
    const key = [keyFromContext, keyFromCommand].find(
      (candidate) => candidate !== undefined && candidate.parking_id === box.parking_id,
    );
    const userFromContext =
      context.fo_user_id !== undefined && lookups.user(context.fo_user_id) ? context.fo_user_id : undefined;
    const parking = lookups.parking(box.parking_id);
    const keys = hexKeys([parking?.parking_key, parking?.parking_key_next, box.box_key]);
    // An ACCESS_SIGNED renders in full only when a public key the parking
    // knows (now, before a rotation, or being installed) verifies it; else
    // `... AUTH_FAILED`. Public keys only: the private ones stay unread here.
    const issuerKeys = hexKeys([
      parking?.issuer_public_key,
      parking?.issuer_previous_public_key,
      parking?.issuer_next_public_key,
    ]);
    return {
      fo_user_id: key?.user_id ?? userFromContext ?? null,
      smart_key_id: key?.id ?? null,
      equipment_id: box.module_id,
      secured_parking_id: box.parking_id,
      type: control ? 'control' : box.direction === 'entrance' ? 'in' : 'out',
      command,
      command_decrypted: renderCommand(commandBytes, keys, issuerKeys),
      response,
      response_decrypted: response === null ? null : renderResponse(Buffer.from(response, 'base64')),
      offline: false,
      created_at: createdAt,
      point_attributes: null,
      mqtt_message_digest: digest,
    };
  }

  /** Stores what is waiting now, before the database closes. */
  flush(): Promise<void> {
    return this.ctx.groupCommit.flush();
  }

  /** A message on a topic that names no box (say a module id that is not
   * canonical decimal, `09101`): counted and dropped. */
  refuseTopic(topic: string): void {
    this.counters.refused.bad_topic++;
    this.#logger.warn({ topic: topic.slice(0, 200), reason: 'bad_topic' }, 'response message not stored');
  }

  #refuse(reason: keyof IngestionCounters['refused'], moduleId: number, detail: string): void {
    this.counters.refused[reason]++;
    this.#logger.warn({ module_id: moduleId, reason, detail }, 'response message not stored');
  }
}

function parsedOf(payload: Buffer): ReceivedResponseMessage | MessageError {
  try {
    return parseResponseMessage(payload);
  } catch (error) {
    if (error instanceof MessageError) return error;
    throw error;
  }
}

/** What makes a message the same message: its box and its bytes. A broker
 * redelivers a message as it was (after a reconnect, or to the kept session
 * of a process that died before its PUBACK); the box log of an unverified
 * one is stored once by it (box_logs.message_digest). */
function messageDigestOf(moduleId: number, payload: Buffer): string {
  return createHash('sha256').update(`${moduleId}\n`).update(payload).digest('hex');
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) of when the response was received: the
 * message's received_at (ISO 8601 with an offset, years 0001..9999), or now
 * when it has none; undefined when it has one off that format (not
 * Date.parse, which takes `+010000-…` and "Thu, 01 Jan 2026"). */
function createdAtOf(receivedAt: string | undefined, nowMs: number): string | undefined {
  if (receivedAt === undefined) return sqlTime(nowMs);
  const ms = parseIsoTime(receivedAt);
  return ms === undefined ? undefined : sqlTime(ms);
}

/** The smart key ids a message names: its context's, and an access command's key_id. */
function keyIdsOf({ command, context }: ReceivedResponseMessage): number[] {
  const ids = context.smart_key_id === undefined ? [] : [context.smart_key_id];
  const header = parseCommandHeader(Buffer.from(command, 'base64'));
  if (header.ok && isAccessKind(header.header.kind)) ids.push(header.header.keyId);
  return ids;
}

function hexKeys(candidates: readonly (string | null | undefined)[]): Buffer[] {
  return candidates.filter((hex): hex is string => typeof hex === 'string').map((hex) => Buffer.from(hex, 'hex'));
}
