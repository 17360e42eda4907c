// The page's one store, fed by the event stream and by the answers of the
// actions. Changes are queued and applied once per animation frame, so a
// burst of messages (a 5,000-box fleet, 1,000 box logs a second) costs one
// render per frame. The state is immutable: a card whose box object did not
// change is not rendered again (views/box-card.tsx compares by identity).
import type {
  Box,
  BoxLog,
  ConformanceRun,
  ControlDelivery,
  ForwardingStatus,
  Parking,
  RunView,
  Session,
  Snapshot,
} from './types';

/** Box logs kept in the stream, newest first. */
export const MAX_LOG_ROWS = 500;
/** Sessions of the day shown, the newest: the snapshot sends at most as many. */
export const MAX_SESSION_ROWS = 200;
/** Runs the stream told of (`run` events), the newest kept. */
export const MAX_LIVE_RUNS = 200;
/** Seconds of the chart. */
export const CHART_SECONDS = 60;

export type Connection = 'live' | 'reconnecting';

export interface ActionResult {
  outcome: 'ok' | 'error' | 'pending';
  text: string;
}

export interface ParkingInfo {
  id: number;
  name: string;
  access_mode: string;
  is_online: boolean;
  /** Module ids of its boxes, in the order the API listed them. */
  boxIds: number[];
}

/** Per second: commands seen (box logs and control deliveries), responses (verified logs), latency. */
export interface ChartSeries {
  seconds: number[];
  commands: number[];
  responses: number[];
  latencyMs: (number | null)[];
}

export interface State {
  connection: Connection;
  loaded: boolean;
  serverOffsetMs: number;
  parkings: ParkingInfo[];
  boxes: ReadonlyMap<number, Box>;
  logs: readonly BoxLog[];
  droppedLogs: number;
  sessions: ReadonlyMap<number, Session>;
  /** The sessions of the day, shown or not (the newest MAX_SESSION_ROWS are shown). */
  sessionsTotal: number;
  /** Smart keys seen in box logs, per session (for revoke when the session item names none). */
  sessionKeys: ReadonlyMap<number, readonly number[]>;
  forwarding: ReadonlyMap<number, readonly ForwardingStatus[]>;
  runs: ReadonlyMap<number, ConformanceRun>;
  /** Kept runs as the stream's `run` events last told them (with their results so far), by run id. */
  liveRuns: ReadonlyMap<string, RunView>;
  results: ReadonlyMap<string, ActionResult>;
  chart: ChartSeries;
}

interface Bucket {
  commands: number;
  responses: number;
  latencySum: number;
  latencyCount: number;
}

type Change = (state: State) => State;

/** A change and whether it is a large stream message (one a frame). */
interface Queued {
  change: Change;
  large: boolean;
}

export interface Store {
  get(): State;
  subscribe(listener: () => void): () => void;
  snapshot(snapshot: Snapshot): void;
  boxes(boxes: Box[]): void;
  boxLogs(logs: BoxLog[], dropped: number): void;
  sessions(sessions: Session[]): void;
  forwarding(items: ForwardingStatus[]): void;
  control(deliveries: ControlDelivery[]): void;
  conformance: (run: ConformanceRun) => void;
  /** A kept run started or changed (a case added, its end): the stream's `run` event. */
  run: (run: RunView) => void;
  result(key: string, result: ActionResult): void;
  connection(connection: Connection): void;
  /** Moves the chart on by the clock when no event came (once a second). */
  tick(): void;
}

export function initialState(): State {
  return {
    connection: 'reconnecting',
    loaded: false,
    serverOffsetMs: 0,
    parkings: [],
    boxes: new Map(),
    logs: [],
    droppedLogs: 0,
    sessions: new Map(),
    sessionsTotal: 0,
    sessionKeys: new Map(),
    forwarding: new Map(),
    runs: new Map(),
    liveRuns: new Map(),
    results: new Map(),
    chart: { seconds: [], commands: [], responses: [], latencyMs: [] },
  };
}

/** The newest MAX_SESSION_ROWS sessions (by id) of these. */
function newestSessions(sessions: Map<number, Session>): Map<number, Session> {
  if (sessions.size <= MAX_SESSION_ROWS) return sessions;
  const kept = [...sessions.keys()].sort((a, b) => b - a).slice(0, MAX_SESSION_ROWS);
  return new Map(kept.map((id) => [id, sessions.get(id) as Session]));
}

function groupForwarding(items: ForwardingStatus[], into: Map<number, readonly ForwardingStatus[]>): void {
  const fresh = new Map<number, ForwardingStatus[]>();
  for (const item of items) {
    // A snapshot item may hold its parking's URLs (`urls`) or be one URL's status.
    const nested = (item as ForwardingStatus & { urls?: ForwardingStatus[] }).urls;
    const list = fresh.get(item.parking_id) ?? [];
    if (Array.isArray(nested)) list.push(...nested.map((url) => ({ ...url, parking_id: item.parking_id })));
    else list.push(item);
    fresh.set(item.parking_id, list);
  }
  for (const [id, list] of fresh) into.set(id, list);
}

function withKeys(sessionKeys: ReadonlyMap<number, readonly number[]>, logs: readonly BoxLog[]) {
  let next: Map<number, readonly number[]> | null = null;
  for (const log of logs) {
    if (
      log.session_id === null ||
      log.session_id === undefined ||
      log.smart_key_id === null ||
      log.smart_key_id === undefined
    )
      continue;
    const known = (next ?? sessionKeys).get(log.session_id) ?? [];
    if (known.includes(log.smart_key_id)) continue;
    next ??= new Map(sessionKeys);
    next.set(log.session_id, [...known, log.smart_key_id]);
  }
  return next ?? sessionKeys;
}

export function createStore(now: () => number = () => Date.now()): Store {
  let state = initialState();
  const listeners = new Set<() => void>();
  let queue: Queued[] = [];
  let frame: number | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  // The chart's per-second buckets, keyed by the second (ms / 1000, floored).
  const buckets = new Map<number, Bucket>();

  const bucketOf = (ms: number): Bucket => {
    const second = Math.floor(ms / 1000);
    let bucket = buckets.get(second);
    if (bucket === undefined) {
      bucket = { commands: 0, responses: 0, latencySum: 0, latencyCount: 0 };
      buckets.set(second, bucket);
    }
    return bucket;
  };

  const chartOf = (): ChartSeries => {
    const last = Math.floor(now() / 1000);
    for (const second of buckets.keys()) if (second <= last - CHART_SECONDS) buckets.delete(second);
    const series: ChartSeries = { seconds: [], commands: [], responses: [], latencyMs: [] };
    for (let second = last - CHART_SECONDS + 1; second <= last; second += 1) {
      const bucket = buckets.get(second);
      series.seconds.push(second);
      series.commands.push(bucket?.commands ?? 0);
      series.responses.push(bucket?.responses ?? 0);
      series.latencyMs.push(bucket && bucket.latencyCount > 0 ? bucket.latencySum / bucket.latencyCount : null);
    }
    return series;
  };

  // Updates in slices: a frame applies at most one large stream message (a
  // snapshot, up to 100 changed boxes, up to 200 box logs) and every small
  // change queued before the next one, so the style and layout of the cards
  // and rows it changes fall in frames of their own (perf/dashboard.ts:
  // frames over 100 ms when a flush's boxes and logs landed in one frame).
  // The server sends a few such messages a second: the queue never lags.
  const flush = (all: boolean): void => {
    frame = null;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    let large = 0;
    let index = 0;
    for (; index < queue.length; index += 1) {
      const queued = queue[index] as Queued;
      if (queued.large && large > 0 && !all) break;
      if (queued.large) large += 1;
      state = queued.change(state);
    }
    queue = queue.slice(index);
    state = { ...state, chart: chartOf() };
    for (const listener of listeners) listener();
    if (queue.length > 0) schedule();
  };

  const schedule = (): void => {
    frame ??= requestAnimationFrame(() => flush(false));
    // A hidden tab gets no animation frames: flush everything at least once a second so the queue stays small.
    timer ??= setTimeout(() => {
      if (frame !== null) cancelAnimationFrame(frame);
      flush(true);
    }, 1000);
  };

  const enqueue = (change: Change, large = false): void => {
    queue.push({ change, large });
    schedule();
  };

  const countLogs = (logs: readonly BoxLog[]): void => {
    for (const log of logs) {
      const bucket = bucketOf(Date.parse(log.received_at) || now());
      bucket.commands += 1;
      if (log.verified) bucket.responses += 1;
      if (typeof log.latency_ms === 'number') {
        bucket.latencySum += log.latency_ms;
        bucket.latencyCount += 1;
      }
    }
  };

  return {
    get: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    snapshot(snapshot) {
      // A fresh snapshot (first connection, or a resume too old to replay) starts the chart over from its logs.
      buckets.clear();
      countLogs(snapshot.box_logs);
      enqueue((previous) => {
        const boxes = new Map<number, Box>();
        const parkings: ParkingInfo[] = snapshot.parkings.map((parking: Parking) => {
          for (const box of parking.boxes) boxes.set(box.module_id, { ...box, parking_id: parking.id });
          return {
            id: parking.id,
            name: parking.name,
            access_mode: parking.access_mode,
            is_online: parking.is_online,
            boxIds: parking.boxes.map((box) => box.module_id),
          };
        });
        const forwarding = new Map<number, ForwardingStatus[]>();
        groupForwarding(snapshot.forwarding, forwarding);
        const logs = [...snapshot.box_logs].reverse().slice(0, MAX_LOG_ROWS);
        return {
          ...previous,
          loaded: true,
          serverOffsetMs: (Date.parse(snapshot.server_time) || now()) - now(),
          parkings,
          boxes,
          logs,
          sessions: newestSessions(new Map(snapshot.sessions.map((session) => [session.id, session]))),
          sessionsTotal: snapshot.sessions_total ?? snapshot.sessions.length,
          sessionKeys: withKeys(new Map(), logs),
          forwarding,
        };
      }, true);
    },
    boxes(changed) {
      enqueue((previous) => {
        const boxes = new Map(previous.boxes);
        let parkings = previous.parkings;
        for (const box of changed) {
          const known = boxes.get(box.module_id);
          boxes.set(box.module_id, known ? { ...known, ...box } : box);
          if (!known && box.parking_id !== undefined) {
            // A box new to the page: add it to its parking's cards.
            parkings = parkings.map((parking) =>
              parking.id === box.parking_id ? { ...parking, boxIds: [...parking.boxIds, box.module_id] } : parking,
            );
          }
        }
        return { ...previous, boxes, parkings };
      }, true);
    },
    boxLogs(logs, dropped) {
      countLogs(logs);
      enqueue((previous) => {
        const newest = [...logs].reverse();
        const known = new Set(previous.logs.map((log) => log.id));
        const fresh = newest.filter((log) => !known.has(log.id));
        return {
          ...previous,
          logs: [...fresh, ...previous.logs].slice(0, MAX_LOG_ROWS),
          droppedLogs: previous.droppedLogs + dropped,
          sessionKeys: withKeys(previous.sessionKeys, fresh),
        };
      }, true);
    },
    sessions(changed) {
      enqueue((previous) => {
        const sessions = new Map(previous.sessions);
        // A session newer than every one known is new today; an unknown older
        // one is one of those the snapshot left out (it leaves again below).
        let newest = Math.max(0, ...sessions.keys());
        let total = previous.sessionsTotal;
        for (const session of changed) {
          if (!sessions.has(session.id) && session.id > newest) {
            total += 1;
            newest = session.id;
          }
          sessions.set(session.id, session);
        }
        return { ...previous, sessions: newestSessions(sessions), sessionsTotal: Math.max(total, sessions.size) };
      });
    },
    forwarding(items) {
      enqueue((previous) => {
        const forwarding = new Map(previous.forwarding);
        groupForwarding(items, forwarding);
        return { ...previous, forwarding };
      });
    },
    control(deliveries) {
      for (const delivery of deliveries) bucketOf(Date.parse(delivery.at) || now()).commands += 1;
      enqueue((previous) => previous);
    },
    conformance(run) {
      enqueue((previous) => {
        const current = previous.runs.get(run.module_id);
        // An older run's late event does not replace the one shown.
        if (current !== undefined && String(current.id) !== String(run.id) && current.started_at > run.started_at)
          return previous;
        // Nor does an older view of the same run (a cancel's answer after the stream told its end):
        // a run never goes back to running, and its cases only grow.
        if (
          current !== undefined &&
          String(current.id) === String(run.id) &&
          ((current.state !== 'running' && run.state === 'running') || current.cases.length > run.cases.length)
        )
          return previous;
        const runs = new Map(previous.runs);
        runs.set(run.module_id, run);
        return { ...previous, runs };
      });
    },
    run(run) {
      enqueue((previous) => {
        const current = previous.liveRuns.get(run.id);
        // Events of one run come in order; an ended run never runs again.
        if (current !== undefined && current.state !== 'running' && run.state === 'running') return previous;
        const liveRuns = new Map(previous.liveRuns);
        liveRuns.set(run.id, run);
        if (liveRuns.size > MAX_LIVE_RUNS) {
          const oldest = [...liveRuns.values()].sort((x, y) => (x.started_at < y.started_at ? -1 : 1))[0];
          if (oldest !== undefined) liveRuns.delete(oldest.id);
        }
        return { ...previous, liveRuns };
      });
    },
    result(key, result) {
      enqueue((previous) => {
        const results = new Map(previous.results);
        results.set(key, result);
        return { ...previous, results };
      });
    },
    tick() {
      enqueue((previous) => previous);
    },
    connection(connection) {
      enqueue((previous) => (previous.connection === connection ? previous : { ...previous, connection }));
    },
  };
}
