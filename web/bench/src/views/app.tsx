// The page: the login form until a token is known, then the bench fed by the
// event stream. One store (store.ts) holds what the server sent; the views
// render it and the buttons call the operator API (actions.ts).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { operatorApi, type OperatorApi } from '../operator-api';
import { downloadCapture, failure, retryForwarding, revokeKeys, sendCommand, setFault } from '../actions';
import { forgetToken, storeToken, storedToken, takeTokenFromFragment } from '../auth';
import { createStore, type State, type Store } from '../store';
import { connectEvents, type EventStream } from '../stream';
import type { ConformanceRun } from '../types';
import type { BoxHandlers } from './box-card';
import { BoxLogs } from './box-logs';
import { Chart } from './chart';
import { Conformance } from './conformance';
import { Connection } from './connection';
import { Forwarding } from './forwarding';
import { Login } from './login';
import { Parkings } from './parkings';
import { Runs } from './runs';
import { Sessions } from './sessions';

/** How often a running conformance run is fetched while the stream is down. */
const POLL_MS = 500;

function initialToken(): string | null {
  const fromFragment = takeTokenFromFragment();
  if (fromFragment !== null) storeToken(fromFragment);
  return fromFragment ?? storedToken();
}

export function App() {
  const [token, setToken] = useState<string | null>(initialToken);
  const [loginError, setLoginError] = useState<string | null>(null);
  // A `#token=...` link opened in this tab while the page is up logs in with it too.
  useEffect(() => {
    const onHash = (): void => {
      const fromFragment = takeTokenFromFragment();
      if (fromFragment === null) return;
      storeToken(fromFragment);
      setLoginError(null);
      setToken(fromFragment);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  if (token === null)
    return (
      <Login
        error={loginError}
        onLogin={(value) => {
          storeToken(value);
          setLoginError(null);
          setToken(value);
        }}
      />
    );
  return (
    <Bench
      key={token}
      token={token}
      onUnauthorized={(message) => {
        forgetToken();
        setLoginError(message);
        setToken(null);
      }}
      onLogout={() => {
        forgetToken();
        setToken(null);
      }}
    />
  );
}

interface Session {
  api: OperatorApi;
  store: Store;
  stream: EventStream;
}

function useStoreState(store: Store): State {
  const [state, setState] = useState(store.get());
  useEffect(() => {
    const unsubscribe = store.subscribe(() => setState(store.get()));
    const tick = setInterval(() => store.tick(), 1000);
    return () => {
      unsubscribe();
      clearInterval(tick);
    };
  }, [store]);
  return state;
}

function saveAs(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function Bench(props: { token: string; onUnauthorized: (message: string) => void; onLogout: () => void }) {
  const session = useMemo<Session>(() => {
    let unauthorized = false;
    const api = operatorApi(props.token, (message) => {
      if (unauthorized) return;
      unauthorized = true;
      props.onUnauthorized(message);
    });
    const store = createStore();
    return { api, store, stream: connectEvents(api, store) };
    // One session per token: App keys Bench by it.
  }, []);
  useEffect(() => () => session.stream.close(), [session]);
  const state = useStoreState(session.store);
  /** The box whose kept runs are open (views/runs.tsx), if any. */
  const [runsOf, setRunsOf] = useState<number | null>(null);

  const handlers = useMemo(() => {
    const { api, store } = session;
    const pending = (key: string) => store.result(key, { outcome: 'pending', text: '…' });
    // A run fills in through the stream's `conformance` events; this poll
    // is the fallback while the stream is down (a reconnect past the replay
    // window gets a snapshot, which holds no runs).
    const poll = (run: ConformanceRun): void => {
      if (run.state !== 'running') return;
      setTimeout(() => {
        const current = store.get().runs.get(run.module_id) ?? run;
        if (String(current.id) !== String(run.id) || current.state !== 'running') return;
        if (store.get().connection === 'live') {
          poll(current);
          return;
        }
        api
          .get<{ run: ConformanceRun }>(`/conformance/${encodeURIComponent(String(run.id))}`)
          .then(({ run: next }) => {
            store.conformance(next);
            poll(next);
          })
          .catch((error: unknown) => store.result(`box:${run.module_id}`, failure(error)));
      }, POLL_MS);
    };
    const box: BoxHandlers = {
      command(moduleId, action) {
        pending(`box:${moduleId}`);
        void sendCommand(api, moduleId, action).then((result) => store.result(`box:${moduleId}`, result));
      },
      fault(moduleId, action) {
        pending(`box:${moduleId}`);
        void setFault(api, moduleId, action).then((result) => store.result(`box:${moduleId}`, result));
      },
      capture(moduleId) {
        pending(`box:${moduleId}`);
        void downloadCapture(api, moduleId, saveAs).then((result) => store.result(`box:${moduleId}`, result));
      },
      conformance(moduleId) {
        pending(`box:${moduleId}`);
        api
          .post<{ run: ConformanceRun }>(`/boxes/${moduleId}/conformance`, { source: 'page' })
          .then(({ run }) => {
            store.result(`box:${moduleId}`, { outcome: 'ok', text: 'conformance run started' });
            store.conformance(run);
            poll(run);
          })
          .catch((error: unknown) => store.result(`box:${moduleId}`, failure(error)));
      },
      runs(moduleId) {
        setRunsOf(moduleId);
      },
    };
    return {
      box,
      revoke: (sessionId: number, keys: readonly number[]) => {
        pending(`session:${sessionId}`);
        void revokeKeys(api, keys).then((result) => store.result(`session:${sessionId}`, result));
      },
      retry: (parkingId: number) => {
        pending(`forwarding:${parkingId}`);
        void retryForwarding(api, parkingId).then((result) => store.result(`forwarding:${parkingId}`, result));
      },
      cancel: (run: ConformanceRun) => {
        const key = `conformance:${String(run.id)}`;
        pending(key);
        api
          .post<{
            run: ConformanceRun;
          }>(`/boxes/${run.module_id}/conformance/${encodeURIComponent(String(run.id))}/cancel`, {})
          .then(({ run: cancelled }) => {
            store.result(key, { outcome: 'ok', text: 'cancelling: the run stops now' });
            store.conformance(cancelled);
          })
          .catch((error: unknown) => store.result(key, failure(error)));
      },
      download: (runId: string, file: 'junit.xml' | 'report.json') => {
        fetch(`/api/operator/conformance/${encodeURIComponent(runId)}/${file}`, {
          headers: { authorization: `Bearer ${props.token}` },
        })
          .then(async (response) => {
            if (!response.ok) throw new Error(`HTTP ${response.status}`);
            saveAs(await response.blob(), `conformance-${runId}-${file}`);
          })
          .catch(() => undefined);
      },
    };
  }, [session]);

  return (
    <div class="bench">
      <header class="top">
        <h1>parkbench bench</h1>
        <Connection state={state.connection} reconnect={() => session.stream.reconnect()} />
        <button type="button" class="logout" data-action="logout" onClick={props.onLogout}>
          Log out
        </button>
      </header>
      {!state.loaded ? (
        <p class="empty" role="status">
          Connecting to the event stream…
        </p>
      ) : (
        <div class="layout">
          <div class="boxes-column">
            <Parkings
              parkings={state.parkings}
              boxes={state.boxes}
              results={state.results}
              runs={state.runs}
              handlers={handlers.box}
            />
          </div>
          <div class="side-column">
            {runsOf !== null && (
              <Runs
                key={runsOf}
                moduleId={runsOf}
                api={session.api}
                liveRuns={state.liveRuns}
                nowMs={Date.now() + state.serverOffsetMs}
                close={() => setRunsOf(null)}
              />
            )}
            <Conformance
              runs={state.runs}
              results={state.results}
              cancel={handlers.cancel}
              download={handlers.download}
            />
            <Chart chart={state.chart} />
            <BoxLogs logs={state.logs} dropped={state.droppedLogs} />
            <Sessions
              sessions={state.sessions}
              total={state.sessionsTotal}
              sessionKeys={state.sessionKeys}
              results={state.results}
              revoke={handlers.revoke}
            />
            <Forwarding
              parkings={state.parkings}
              forwarding={state.forwarding}
              results={state.results}
              retry={handlers.retry}
            />
          </div>
        </div>
      )}
    </div>
  );
}
