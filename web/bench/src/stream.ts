// The event stream (GET /api/operator/events, Server-Sent Events). An
// EventSource cannot send an Authorization header, and the long-lived token
// must not sit in a URL (server logs, history): each connection asks for a
// fresh single-use ticket (POST /api/operator/events/tickets, 30 s) and puts
// that in the query. On any error the page closes the source itself (the
// browser's own retry would reuse the spent ticket) and reconnects with a new
// ticket and `last_event_id`, so the server replays what was missed (or sends
// a fresh snapshot when that is too old).
import type { OperatorApi } from './operator-api';
import { ApiCallError } from './operator-api';
import type { Store } from './store';
import type {
  Box,
  BoxLog,
  ConformanceRun,
  ControlDelivery,
  ForwardingStatus,
  RunView,
  Session,
  Snapshot,
} from './types';

interface Ticket {
  ticket: string;
  expires_at: string;
}

export interface EventStream {
  /** Closes the connection and opens a new one at once (the indicator's button). */
  reconnect: () => void;
  close(): void;
}

/** Each event of the stream and its data (the bench page contract). */
interface StreamEvents {
  snapshot: Snapshot;
  boxes: { boxes: Box[] };
  box_logs: { box_logs: BoxLog[]; dropped?: number };
  sessions: { sessions: Session[] };
  forwarding: { forwarding: ForwardingStatus[] };
  control: { deliveries: ControlDelivery[] };
  conformance: { run: ConformanceRun };
  run: { run: RunView };
}

const BACKOFF_MS = [500, 1000, 2000, 5000, 10000];

export function connectEvents(api: OperatorApi, store: Store): EventStream {
  let source: EventSource | null = null;
  let lastEventId: string | null = null;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const listeners: [keyof StreamEvents, (event: MessageEvent<string>) => void][] = [];
  // The server sends JSON objects of the contract's shapes (types.ts), one per event name.
  const on = <K extends keyof StreamEvents>(name: K, apply: (data: StreamEvents[K]) => void): void => {
    listeners.push([
      name,
      (event) => {
        if (event.lastEventId !== '') lastEventId = event.lastEventId;
        failures = 0;
        let data: StreamEvents[K];
        try {
          data = JSON.parse(event.data) as StreamEvents[K];
        } catch {
          return; // Not JSON: nothing the page can show (the server sends JSON only).
        }
        apply(data);
      },
    ]);
  };
  on('snapshot', (data) => store.snapshot(data));
  on('boxes', (data) => store.boxes(data.boxes));
  on('box_logs', (data) => store.boxLogs(data.box_logs, data.dropped ?? 0));
  on('sessions', (data) => store.sessions(data.sessions));
  on('forwarding', (data) => store.forwarding(data.forwarding));
  on('control', (data) => store.control(data.deliveries));
  on('conformance', (data) => store.conformance(data.run));
  on('run', (data) => store.run(data.run));

  const schedule = (): void => {
    if (closed || retry !== null) return;
    const delay = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)] ?? 10000;
    failures += 1;
    retry = setTimeout(() => {
      retry = null;
      void open();
    }, delay);
  };

  const drop = (): void => {
    if (source === null) return;
    for (const [name, listener] of listeners) source.removeEventListener(name, listener as EventListener);
    source.close();
    source = null;
  };

  async function open(): Promise<void> {
    drop();
    store.connection('reconnecting');
    let ticket: Ticket;
    try {
      ticket = await api.post<Ticket>('/events/tickets', {});
    } catch (error) {
      // A 401 shows the login form (api.ts); anything else is retried.
      if (!(error instanceof ApiCallError && error.status === 401)) schedule();
      return;
    }
    if (closed) return;
    const query = new URLSearchParams({ ticket: ticket.ticket });
    if (lastEventId !== null) query.set('last_event_id', lastEventId);
    const next = new EventSource(`/api/operator/events?${query.toString()}`);
    source = next;
    for (const [name, listener] of listeners) next.addEventListener(name, listener as EventListener);
    next.addEventListener('open', () => store.connection('live'));
    next.addEventListener('error', () => {
      if (source !== next) return;
      drop();
      store.connection('reconnecting');
      schedule();
    });
  }

  void open();
  return {
    reconnect() {
      if (retry !== null) clearTimeout(retry);
      retry = null;
      failures = 0;
      void open();
    },
    close() {
      closed = true;
      if (retry !== null) clearTimeout(retry);
      drop();
    },
  };
}
