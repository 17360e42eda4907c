// The services of the API over its store, built once by createService
// (service.ts) and passed in (no globals): the configuration, the clock,
// repositories, the failed-login limiter, the bearer cache, the payment
// provider, the group commit of box log requests, the event hub and stream,
// and the forwarding worker (started by createService). No module takes the
// whole record: each declares the few dependencies it uses
// (SessionServiceDeps, BearerDeps, ...), which this record satisfies;
// createService wires the callbacks between them (a payment's outcome to the
// session service), so this file imports no domain logic.
import pg from 'pg';
import type { ApiConfig } from './config/index.js';
import type { Clock } from '../lib/clock.js';
import type { Store } from './db/store.js';
import { GroupCommit } from './db/group-commit.js';
import { BearerCache, ClientAppRepository, LoginLimiter, TokenRepository, UserRepository } from './auth/index.js';
import {
  type SessionCreation,
  sessionCreationOf,
  SessionCreateLimiter,
  sessionCreateLimitsOf,
  SessionRepository,
} from './sessions/index.js';
import { type PaymentProvider, PaymentRepository, SandboxProvider } from './payments/index.js';
import { type ForwardingLogger, ForwardingWorker, OutboxRepository } from './forwarding/index.js';
import { EventStream, EventTicketRepository, OperatorRepository, StreamRenderer } from './operators/index.js';
import { EventHub } from './events/hub.js';
import { LiveBoxStates } from './events/live-states.js';
import { EventRelay, type RelayLogger } from './events/relay.js';
import { BoxRepository } from './boxes/index.js';
import { ParkingRepository } from './parkings/index.js';
import { SmartKeyRepository } from './smart-keys/index.js';
import { type EndAtExit, type IngestStore, ingestStoreOf, sessionEnd } from './box-logs/index.js';
import { Reservations } from './reservations/index.js';

export interface AppContext {
  config: ApiConfig;
  clock: Clock;
  /** The database, SQLite or PostgreSQL, behind Kysely (api/db/store.ts). */
  store: Store;
  /** Request writes that share a transaction per turn of the event loop (POST /api/box_logs). */
  groupCommit: GroupCommit;
  /** Box-log ingestion's reads and writes on the store (api/box-logs/ingest-store.ts). */
  ingestStore: IngestStore;
  /** How ingestion ends a session at an exit box (api/box-logs/session-end.ts). */
  sessionEnd: EndAtExit;
  clientApps: ClientAppRepository;
  users: UserRepository;
  tokens: TokenRepository;
  parkings: ParkingRepository;
  boxes: BoxRepository;
  sessions: SessionRepository;
  smartKeys: SmartKeyRepository;
  payments: PaymentRepository;
  paymentProvider: PaymentProvider;
  outbox: OutboxRepository;
  forwarding: ForwardingWorker;
  loginLimiter: LoginLimiter;
  /** Each driver's token bucket of session creations, in the store. */
  sessionCreateLimiter: SessionCreateLimiter;
  /** A session's creation on the store's engine: its reads, and its writes with the driver's token. */
  sessionCreation: SessionCreation;
  bearerCache: BearerCache;
  /** Operator accounts of /api/operator/... (never cached: removal takes effect at
   * once, on the next request and on the open event streams at their next flush). */
  operators: OperatorRepository;
  /** Raw events of the operator's event stream (api/events/): domain code publishes here. */
  events: EventHub;
  /** Each box's newest MQTT state (`live` in the operator API), fed by the MQTT side. */
  liveStates: LiveBoxStates;
  /** Single-use tickets of GET /api/operator/events. */
  eventTickets: EventTicketRepository;
  /** The clients of GET /api/operator/events and their flushes. */
  eventStream: EventStream;
  /** On PostgreSQL, the events of the other API processes on the database
   * (started and closed by createService); none on SQLite. */
  eventRelay: EventRelay | undefined;
  /** The boxes' reservations and this process's requests waiting for them
   * (started and closed by createService, which tells the control dispatcher of their ends). */
  reservations: Reservations;
}

/** Where the context's services log; none when absent. */
export interface ContextLoggers {
  forwarding?: ForwardingLogger;
  events?: RelayLogger;
}

export function createContext(config: ApiConfig, clock: Clock, store: Store, loggers: ContextLoggers = {}): AppContext {
  const log = loggers.forwarding;
  const tokens = new TokenRepository(store);
  const bearerCache = new BearerCache(config.tokenCacheSeconds * 1000, clock);
  tokens.onPairEnded((pairId) => bearerCache.evictPair(pairId));
  const sessions = new SessionRepository(store);
  const parkings = new ParkingRepository(store);
  const boxes = new BoxRepository(store);
  const payments = new PaymentRepository(store);
  const outbox = new OutboxRepository(store);
  const groupCommit = new GroupCommit(store);
  const events = new EventHub({
    clock,
    replayMs: config.eventsReplaySeconds * 1000,
    maxEvents: config.eventsReplayMax,
    afterCommit: (callback) => groupCommit.afterCommit(callback),
    onLocal: (kind, payload) => eventRelay?.add(kind, payload),
  });
  const liveStates = new LiveBoxStates();
  const renderer = new StreamRenderer(store, liveStates);
  const eventRelay =
    store.dialect === 'postgres'
      ? new EventRelay({
          hub: events,
          pool: store.pool,
          connect: (applicationName) => new pg.Client({ ...store.pool.options, application_name: applicationName }),
          readBoxLogs: (ids) => renderer.boxLogs(ids),
          clock,
          log: loggers.events ?? { warn: () => undefined },
        })
      : undefined;
  const operators = new OperatorRepository(store);
  const paymentProvider = new SandboxProvider({
    store,
    payments,
    clock,
    publicUrl: config.publicUrl,
    returnSchemes: config.paymentReturnSchemes,
    parkingNameOf: async (sessionId) => {
      const row = await store.kysely
        .selectFrom('parking_sessions as s')
        .innerJoin('secured_parkings as p', 'p.id', 's.parking_id')
        .select('p.name')
        .where('s.id', '=', sessionId)
        .executeTakeFirst();
      return row?.name ?? 'Parking';
    },
  });
  const smartKeys = new SmartKeyRepository(store);
  const sessionCreateLimiter = new SessionCreateLimiter(store.dialect, store.kysely, sessionCreateLimitsOf(config));
  const ctx: AppContext = {
    config,
    clock,
    store,
    groupCommit,
    ingestStore: ingestStoreOf(store),
    // The session service's own dependencies are this record (below).
    sessionEnd: (on, session, endMs) => sessionEnd(ctx)(on, session, endMs),
    clientApps: new ClientAppRepository(store),
    users: new UserRepository(store),
    tokens,
    parkings,
    boxes,
    sessions,
    smartKeys,
    payments,
    paymentProvider,
    outbox,
    forwarding: new ForwardingWorker({
      clock,
      outbox,
      timeoutMs: config.forwardingTimeoutMs,
      allowPrivate: config.forwardingAllowPrivate,
      events,
      ...(log ? { log } : {}),
    }),
    bearerCache,
    operators,
    events,
    liveStates,
    eventTickets: new EventTicketRepository(store),
    eventStream: new EventStream({
      hub: events,
      renderer,
      clock,
      flushMs: config.eventsFlushMs,
      // A removed operator's streams end, whichever process removed it.
      operatorTokens: (operatorIds) => operators.tokenHashesOf(operatorIds),
      onError: (error) =>
        log?.warn({ err: error }, 'the event stream could not read the store; the next flush tries again'),
    }),
    eventRelay,
    reservations: new Reservations({ store, clock, pollMs: config.reservationPollMs, events }),
    sessionCreateLimiter,
    sessionCreation: sessionCreationOf(store, {
      clock,
      parkings,
      boxes,
      sessions,
      smartKeys,
      sessionCreateLimiter,
      groupCommit,
      paymentProvider,
    }),
    loginLimiter: new LoginLimiter(
      store,
      {
        maxFailuresPerUsername: config.loginMaxFailuresPerUsername,
        maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
        windowMs: config.loginFailureWindowSeconds * 1000,
      },
      clock,
      { lockWaitMs: config.databaseBusyTimeoutMs },
    ),
  };
  return ctx;
}
