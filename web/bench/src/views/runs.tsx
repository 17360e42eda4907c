// A box's kept runs, opened from its card: newest first, a page at a time
// ("More"), each with its verdict, kind, source, who started it, its labels
// (an http or https label is a link), when and how long. A run that is
// running counts its cases up as the stream's `run` events arrive, and a new
// run (from the command line, CI or this page) appears at the top. Two runs
// picked as A (the base) and B are compared (run-compare.tsx); a case's or a
// limit's figure across the runs is plotted (run-trend.tsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ago, dayTime, duration, httpLink } from '../format';
import type { OperatorApi } from '../operator-api';
import { caseCounts, mergedHistory, runsPage } from '../runs';
import type { RunView } from '../types';
import { RunCompare } from './run-compare';
import { RunTrend } from './run-trend';

interface Props {
  moduleId: number;
  api: OperatorApi;
  /** The runs the stream told of, by id (store.ts). */
  liveRuns: ReadonlyMap<string, RunView>;
  /** The server's time now, in ms. */
  nowMs: number;
  close: () => void;
}

function Labels({ labels }: { labels: Record<string, string> }) {
  const names = Object.keys(labels).sort();
  if (names.length === 0) return null;
  return (
    <p class="labels">
      {names.map((name) => {
        const value = labels[name] ?? '';
        const href = httpLink(value);
        return (
          <span class="label" key={name} data-label={name}>
            <span class="muted">{name}:</span>{' '}
            {href === null ? (
              <span class="wrap">{value}</span>
            ) : (
              <a class="wrap" href={href} target="_blank" rel="noopener noreferrer">
                {value}
              </a>
            )}
          </span>
        );
      })}
    </p>
  );
}

function Cases({ run }: { run: RunView }) {
  const { total, failed, passed } = caseCounts(run);
  if (total === null) return null;
  const unit = run.kind === 'soak' ? 'limits' : 'cases';
  return (
    <span data-run-cases={total}>
      {' · '}
      {total} {unit}
      {passed !== null ? `, ${passed} passed` : ''}
      {failed !== null && failed > 0 ? `, ${failed} failed` : ''}
    </span>
  );
}

interface RowProps {
  run: RunView;
  nowMs: number;
  pickedA: boolean;
  pickedB: boolean;
  pick: (side: 'a' | 'b', id: string) => void;
}

function RunRow({ run, nowMs, pickedA, pickedB, pick }: RowProps) {
  const lasted =
    run.state === 'running' ? Math.max(run.duration_ms, nowMs - Date.parse(run.started_at)) : run.duration_ms;
  return (
    <li
      class="run-row"
      data-run-id={run.id}
      data-state={run.state}
      data-kind={run.kind}
      data-source={run.source}
      data-picked={pickedA ? 'a' : pickedB ? 'b' : undefined}
    >
      <div class="run-line">
        <span class={`run-state ${run.state}`} data-verdict>
          {run.state}
        </span>{' '}
        <span>{run.kind}</span>
        <span class="muted">
          {' · '}
          {run.source} · by <span class="wrap">{run.started_by}</span>
        </span>
        <span class="pick">
          <button
            type="button"
            data-action="pick-a"
            aria-pressed={pickedA}
            title="Compare from this run (the base)"
            onClick={() => pick('a', run.id)}
          >
            A
          </button>
          <button
            type="button"
            data-action="pick-b"
            aria-pressed={pickedB}
            title="Compare to this run"
            onClick={() => pick('b', run.id)}
          >
            B
          </button>
        </span>
      </div>
      <p class="muted run-meta">
        <time dateTime={run.started_at} title={dayTime(run.started_at)}>
          {ago(run.started_at, nowMs)}
        </time>
        {' · '}
        <span data-duration-ms={lasted}>{duration(lasted)}</span>
        <Cases run={run} />
      </p>
      <Labels labels={run.labels} />
      {run.error !== null && run.error !== '' && (
        <p class="muted wrap" data-run-error>
          {run.error}
        </p>
      )}
    </li>
  );
}

export function Runs({ moduleId, api, liveRuns, nowMs, close }: Props) {
  const [loaded, setLoaded] = useState<RunView[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<{ a: string | null; b: string | null }>({ a: null, b: null });
  const [compared, setCompared] = useState<{ a: string; b: string } | null>(null);
  const [trend, setTrend] = useState(false);
  const panel = useRef<HTMLElement>(null);

  const load = (from: string | null): void => {
    setLoading(true);
    setError(null);
    runsPage(api, moduleId, from)
      .then((page) => {
        setLoaded((previous) => {
          const known = new Set(previous.map((run) => run.id));
          return [...previous, ...page.runs.filter((run) => !known.has(run.id))];
        });
        setCursor(page.next_cursor);
      })
      .catch((failure: unknown) => setError(failure instanceof Error ? failure.message : 'The runs could not be read.'))
      .finally(() => setLoading(false));
  };

  useEffect(() => {
    load(null);
    panel.current?.scrollIntoView({ block: 'nearest' });
  }, []);

  const runs = mergedHistory(moduleId, loaded, liveRuns);
  const pick = (side: 'a' | 'b', id: string): void =>
    setPicked((previous) => ({ ...previous, [side]: previous[side] === id ? null : id }));
  const comparable = picked.a !== null && picked.b !== null && picked.a !== picked.b;

  return (
    <section class="panel runs" ref={panel} aria-labelledby="runs-title" data-runs={moduleId}>
      <h2 id="runs-title" class="panel-head">
        <span>Runs of box {moduleId}</span>
        <button type="button" data-action="runs-close" onClick={close}>
          Close
        </button>
      </h2>
      <div class="buttons">
        <button
          type="button"
          data-action="compare"
          disabled={!comparable}
          title={comparable ? 'Compare run B with run A' : 'Pick run A (the base) and run B in the list'}
          onClick={() => {
            if (picked.a !== null && picked.b !== null) setCompared({ a: picked.a, b: picked.b });
          }}
        >
          Compare A → B
        </button>
        <button type="button" data-action="trend" aria-pressed={trend} onClick={() => setTrend(!trend)}>
          Trend
        </button>
      </div>
      {compared !== null && (
        <RunCompare
          key={`${compared.a}:${compared.b}`}
          api={api}
          a={compared.a}
          b={compared.b}
          close={() => setCompared(null)}
        />
      )}
      {trend && <RunTrend api={api} runs={runs} />}
      {runs.length === 0 && !loading && error === null && <p class="empty">No run of this box is kept.</p>}
      <ol class="run-list">
        {runs.map((run) => (
          <RunRow
            key={run.id}
            run={run}
            nowMs={nowMs}
            pickedA={picked.a === run.id}
            pickedB={picked.b === run.id}
            pick={pick}
          />
        ))}
      </ol>
      {error !== null && (
        <p class="action-result error" role="status" data-runs-error>
          {error}
        </p>
      )}
      {loading && <p class="muted">Loading runs…</p>}
      {!loading && cursor !== null && (
        <button type="button" data-action="runs-more" onClick={() => load(cursor)}>
          More
        </button>
      )}
    </section>
  );
}
