// MQTT ingestion (issue 7): a response message on
// `parkbench/boxes/{module_id}/response` becomes a box log through the same
// path as POST /api/box_logs (ingestBoxLogs: same verification of the tag,
// same session effects, same deduplication of verified logs, same
// forwarding). A message that cannot become a log at all (not JSON, no
// command, a received_at off its format, an unknown box) is counted, logged with its reason, and
// acknowledged: it never stops ingestion. A message that meets a database
// locked by another process past busy_timeout is no such message: nothing of
// it is written, it stays unacknowledged, and it is tried again
// BUSY_RETRY_MS later (the broker redelivers it if this process dies).
import { isAccessKind, isControlKind, parseCommandHeader, renderCommand, renderResponse } from '../../firmware-protocol/index.js';
import { sleep } from '../../lib/clock.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { MessageError} from '../../lib/mqtt-messages.js';
import { isBase64, parseJsonObject, type CommandContext } from '../../lib/mqtt-messages.js';
import { ingestBoxLogs } from '../box-logs/ingest.js';
import type { BoxLogInput, BoxLogResult } from '../box-logs/types.js';
import type { AppContext } from '../context.js';
import { isDatabaseBusy } from '../db/busy.js';
import { ApiError } from '../errors.js';
import type { BoxRow } from '../repositories/boxes.js';
import type { ParkingRow } from '../repositories/parkings.js';
import type { SmartKeyRow } from '../repositories/smart-keys.js';
import { FIRST_YEAR, LAST_YEAR, parseIsoTime, sqlTime } from '../sessions/time.js';

export interface IngestionCounters {
  /** Box logs stored (verified or not). */
  stored: number;
  /** Verified responses already stored (a redelivery). */
  duplicates: number;
  /** Messages that could not become a box log, by reason. */
  refused: Record<'not_json' | 'no_command' | 'bad_received_at' | 'bad_topic' | 'unknown_box' | 'refused_by_api' | 'failed', number>;
  /** Messages put off because the database was busy (each time). */
  busy: number;
}

/** How long a message that met a busy database waits before it is tried again. */
export const BUSY_RETRY_MS = 1_000;

/** A response message as the broker hands it over. */
export interface ResponseMessage {
  readonly moduleId: number;
  readonly payload: Buffer;
}

/** A response message as it arrived, for whoever waits on its request_id. */
export interface IngestedResponse {
  readonly moduleId: number;
  readonly response: string | null;
  readonly error: string | undefined;
  readonly context: CommandContext;
  readonly log: BoxLogResult | undefined;
}

/** A message that can become a box log, before it is stored. */
interface Prepared<M extends ResponseMessage = ResponseMessage> {
  /** The message it came from. */
  readonly message: M;
  readonly moduleId: number;
  readonly response: string | null;
  readonly error: string | undefined;
  readonly context: CommandContext;
  readonly entry: BoxLogInput;
}

export class ResponseIngestion {
  readonly counters: IngestionCounters = { stored: 0, duplicates: 0, refused: { not_json: 0, no_command: 0, bad_received_at: 0, bad_topic: 0, unknown_box: 0, refused_by_api: 0, failed: 0 }, busy: 0 };
  readonly #logger: Logger;
  readonly #listeners = new Set<(response: IngestedResponse) => void>();

  constructor(
    private readonly ctx: AppContext,
    logger: Logger = silentLogger,
  ) {
    this.#logger = logger.child({ component: 'api:ingestion' });
  }

  /** Called with every response message taken (stored or not). */
  onResponse(listener: (response: IngestedResponse) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Ingests one message; resolves once its box log is committed (or it is
   * refused for good), trying again while the database is busy. Never rejects. */
  async ingest(moduleId: number, payload: Buffer): Promise<void> {
    while (this.ingestMany([{ moduleId, payload }]).length > 0) await sleep(this.ctx.clock, BUSY_RETRY_MS);
  }

  /**
   * Ingests many messages at once (IngestBatcher), synchronously, never
   * throwing: the reads and the box logs of all of them in ONE IMMEDIATE
   * transaction (one ingestBoxLogs call; a read outside a transaction pays
   * for a snapshot of its own). If the batch is refused or fails as a whole,
   * nothing of it is written and each message is stored again alone, so one
   * bad message never costs its neighbours their logs. When it returns,
   * every log is committed, but for the messages it returns: those met a
   * busy database, nothing of them is written, and they are to be tried
   * again later (BUSY_RETRY_MS), unacknowledged until then.
   */
  ingestMany<M extends ResponseMessage>(messages: readonly M[]): M[] {
    const prepared: Prepared<M>[] = [];
    // One transaction: rows read once stay true for the whole batch.
    const lookups = new Lookups(this.ctx, true);
    let preparedAll = false;
    let logs: BoxLogResult[];
    try {
      logs = this.ctx.db
        .transaction(() => {
          for (const message of messages) {
            this.#guarded(message.moduleId, () => {
              const one = this.#prepare(message, lookups);
              if (one !== undefined) prepared.push(one);
            });
          }
          preparedAll = true;
          return prepared.length === 0 ? [] : ingestBoxLogs(this.ctx, prepared.map((one) => one.entry), { source: 'mqtt' });
        })
        .immediate();
    } catch (error) {
      if (isDatabaseBusy(error)) return this.#putOff(messages, error as Error);
      // Rolled back: each message alone.
      this.#logger.warn({ messages: messages.length, err: (error as Error).message }, 'batch not stored as one; storing its messages one by one');
      const busy =
        preparedAll ? prepared.filter((one) => this.#guarded(one.moduleId, () => this.#storeAlone(one)) === 'busy').map((one) => one.message)
        : messages.filter((message) => this.#ingestAlone(message) === 'busy');
      return busy.length === 0 ? [] : this.#putOff(busy, undefined);
    }
    prepared.forEach((one, index) => this.#guarded(one.moduleId, () => this.#settled(one, logs[index])));
    return [];
  }

  /** Counts and logs messages put off by a busy database; returns them. */
  #putOff<M extends ResponseMessage>(messages: readonly M[], error: Error | undefined): M[] {
    this.counters.busy += messages.length;
    this.#logger.warn({ messages: messages.length, retry_ms: BUSY_RETRY_MS, ...(error ? { err: error.message } : {}) }, 'database busy: responses kept unacknowledged, tried again later');
    return [...messages];
  }

  #ingestAlone(message: ResponseMessage): 'done' | 'busy' {
    return this.#guarded(message.moduleId, () => {
      const prepared = this.#prepare(message, new Lookups(this.ctx, false));
      if (prepared !== undefined) this.#storeAlone(prepared);
    });
  }

  /** Runs `work`; an unexpected error is counted and logged, never thrown.
   * A busy database is no such error: 'busy', for the caller to try again. */
  #guarded(moduleId: number, work: () => void): 'done' | 'busy' {
    try {
      work();
    } catch (error) {
      if (isDatabaseBusy(error)) return 'busy';
      this.counters.refused.failed++;
      this.#logger.error({ module_id: moduleId, err: (error as Error).message }, 'response could not be ingested');
    }
    return 'done';
  }

  /** The box log a message becomes, or undefined when it cannot become one (counted). */
  #prepare<M extends ResponseMessage>(message: M, lookups: Lookups): Prepared<M> | undefined {
    const { moduleId, payload } = message;
    let parsed: Record<string, unknown>;
    try {
      parsed = parseJsonObject(payload, 'response message');
    } catch (error) {
      this.#refuse('not_json', moduleId, (error as MessageError).message);
      return undefined;
    }
    const command = parsed.command;
    if (typeof command !== 'string' || !isBase64(command)) {
      this.#refuse('no_command', moduleId, 'the message has no base64 "command"');
      return undefined;
    }
    const createdAt = createdAtOf(parsed.received_at, this.ctx.clock.now());
    if (createdAt === undefined) {
      this.#refuse('bad_received_at', moduleId, `received_at ${JSON.stringify(parsed.received_at).slice(0, 60)} is not ISO 8601 with an offset in years ${FIRST_YEAR}..${LAST_YEAR}`);
      return undefined;
    }
    const response = typeof parsed.response === 'string' && isBase64(parsed.response) ? parsed.response : null;
    const context = contextOf(parsed.context);
    const box = lookups.box(moduleId);
    if (box === undefined) {
      this.#refuse('unknown_box', moduleId, `no box with module id ${moduleId}`);
      return undefined;
    }
    const error = typeof parsed.error === 'string' ? parsed.error : undefined;
    return { message, moduleId, response, error, context, entry: this.#entry(lookups, box, command, response, context, createdAt) };
  }

  /** Stores one log in a transaction of its own. */
  #storeAlone(prepared: Prepared): void {
    let log: BoxLogResult | undefined;
    try {
      log = ingestBoxLogs(this.ctx, [prepared.entry], { source: 'mqtt' })[0];
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.#refuse('refused_by_api', prepared.moduleId, `${error.message} ${JSON.stringify(error.details)}`);
    }
    this.#settled(prepared, log);
  }

  /** Counts a committed (or refused) log and tells whoever waits for it. */
  #settled(prepared: Prepared, log: BoxLogResult | undefined): void {
    if (log?.duplicate === true) this.counters.duplicates++;
    else if (log !== undefined) this.counters.stored++;
    const { moduleId, response, error, context } = prepared;
    for (const listener of this.#listeners) listener({ moduleId, response, error, context, log });
  }

  /** The box log of a response: ids from the message's context when the
   * sender gave valid ones, else from the command itself (key_id -> smart
   * key -> driver). */
  #entry(lookups: Lookups, box: BoxRow, command: string, response: string | null, context: CommandContext, createdAt: string): BoxLogInput {
    const commandBytes = Buffer.from(command, 'base64');
    const header = parseCommandHeader(commandBytes);
    const control = header.ok && isControlKind(header.header.kind);
    const keyFromContext = context.smart_key_id === undefined ? undefined : lookups.smartKey(context.smart_key_id);
    // An access command's key_id is a smart key id, whichever kind carries it.
    const keyFromCommand = header.ok && isAccessKind(header.header.kind) ? lookups.smartKey(header.header.keyId) : undefined;
    const key = [keyFromContext, keyFromCommand].find((candidate) => candidate !== undefined && candidate.parking_id === box.parking_id);
    const userFromContext = context.fo_user_id !== undefined && lookups.user(context.fo_user_id) !== undefined ? context.fo_user_id : undefined;
    const parking = lookups.parking(box.parking_id);
    const keys = hexKeys([parking?.parking_key, parking?.parking_key_next, box.box_key]);
    // An ACCESS_SIGNED renders in full only when a public key the parking
    // knows (now, before a rotation, or being installed) verifies it; else
    // `... AUTH_FAILED`. Public keys only: the private ones stay unread here.
    const issuerKeys = hexKeys([parking?.issuer_public_key, parking?.issuer_previous_public_key, parking?.issuer_next_public_key]);
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
    };
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

/** The rows a message's box log is built from; within one batch (one
 * transaction) each is read once. */
class Lookups {
  readonly box: (moduleId: number) => BoxRow | undefined;
  readonly parking: (id: number) => ParkingRow | undefined;
  readonly smartKey: (id: number) => SmartKeyRow | undefined;
  readonly user: (id: number) => unknown;

  constructor(ctx: AppContext, remember: boolean) {
    const once = <V>(lookup: (id: number) => V): ((id: number) => V) => (remember ? memo(lookup) : lookup);
    this.box = once((moduleId) => ctx.boxes.findByModuleId(moduleId));
    this.parking = once((id) => ctx.parkings.findById(id));
    this.smartKey = once((id) => ctx.smartKeys.findById(id));
    this.user = once((id) => ctx.users.findById(id));
  }
}

function memo<V>(lookup: (id: number) => V): (id: number) => V {
  const seen = new Map<number, V>();
  return (id) => {
    if (seen.has(id)) return seen.get(id) as V;
    const value = lookup(id);
    seen.set(id, value);
    return value;
  };
}

function contextOf(value: unknown): CommandContext {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const fields = value as Record<string, unknown>;
  const id = (item: unknown): number | undefined => (typeof item === 'number' && Number.isSafeInteger(item) && item > 0 ? item : undefined);
  const context: { request_id?: string; fo_user_id?: number; smart_key_id?: number } = {};
  if (typeof fields.request_id === 'string' && fields.request_id.length <= 200) context.request_id = fields.request_id;
  const user = id(fields.fo_user_id);
  if (user !== undefined) context.fo_user_id = user;
  const key = id(fields.smart_key_id);
  if (key !== undefined) context.smart_key_id = key;
  return context;
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) of when the response was received: the
 * message's received_at (ISO 8601 with an offset, years 0001..9999), or now
 * when it has none; undefined when it has one off that format (not
 * Date.parse, which takes `+010000-…` and "Thu, 01 Jan 2026"). */
function createdAtOf(receivedAt: unknown, nowMs: number): string | undefined {
  if (receivedAt === undefined || receivedAt === null) return sqlTime(nowMs);
  const ms = typeof receivedAt === 'string' ? parseIsoTime(receivedAt) : undefined;
  return ms === undefined ? undefined : sqlTime(ms);
}

function hexKeys(candidates: readonly (string | null | undefined)[]): Buffer[] {
  return candidates.filter((hex): hex is string => typeof hex === 'string').map((hex) => Buffer.from(hex, 'hex'));
}
